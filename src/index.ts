/**
 * Package entry of the gateway repository: what integrators imported before @pgw/client existed
 * (verifyWebhookSignature and its companions). Those helpers live in @pgw/client now (use that package in
 * new code, with constructEvent and the typed Event); this re-export keeps old imports working. The
 * gateway itself starts from src/main.ts.
 */
export * from '@pgw/client/webhooks';
