/**
 * @pgw/client: a typed REST client for the Angola payment gateway sandbox, generated from openapi.yaml,
 * and the receiver-side webhook helpers.
 */
export {
  createClient,
  newIdempotencyKey,
  type ListItem,
  type PaginatedPath,
  type PaginateQuery,
  type PgwClient,
  type PgwClientOptions,
  type PgwMethod,
} from './client.js';
export { PgwError } from './errors.js';
export type { RetryOptions } from './retry.js';
export type { ClientPaths, MethodCode, paths, components, operations } from './types.js';
export * from './webhooks/index.js';
