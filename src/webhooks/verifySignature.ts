/**
 * The webhook signature helpers now live in @pgw/client (packages/client/src/webhooks/signature.ts), the
 * package integrators use; the gateway signs with the same code. This module keeps the old import path
 * working for the gateway and its tests. The subpath holds node:crypto code only, so the bundle
 * (npm run build) takes nothing of the HTTP client.
 */
export * from '@pgw/client/webhooks';
