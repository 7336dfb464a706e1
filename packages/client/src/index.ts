/**
 * @pgw/client: a typed REST client for the Angola payment gateway sandbox, generated from openapi.yaml,
 * and the receiver-side webhook helpers.
 */
export { createClient, newIdempotencyKey, type PgwClient, type PgwClientOptions, type PgwMethod } from './client';
export { PgwError } from './errors';
export type { RetryOptions } from './retry';
export type { ClientPaths, paths, components, operations } from './types';
export * from './webhooks/index';
