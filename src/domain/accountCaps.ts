import { ApiError } from '../errors';

/**
 * How many of each growing, listed resource one sandbox account may hold. The caps bound the work a
 * single request can cause (a GraphQL list, a webhook fan-out, a key lookup) so that one client
 * cannot make the service slower for every other. They are stated in openapi.yaml and docs/api.md;
 * change them there too.
 */
export const ACCOUNT_CAPS = {
  /** Webhook endpoints (Stripe's test mode allows 16 too). Each event is sent to every matching one. */
  webhookEndpoints: 16,
  /** Keys not revoked, counting the account's own secret and publishable keys. */
  activeApiKeys: 20,
  /** Payment links that are still active (deactivating one frees its place). */
  activePaymentLinks: 1000,
  /** Trusted GraphQL documents (a large frontend ships a few hundred operations). */
  graphqlDocuments: 1000,
} as const;

export type CappedResource = keyof typeof ACCOUNT_CAPS;

const NOUN: Record<CappedResource, string> = {
  webhookEndpoints: 'webhook endpoints',
  activeApiKeys: 'active API keys',
  activePaymentLinks: 'active payment links',
  graphqlDocuments: 'trusted GraphQL documents',
};

const FREE_ONE: Record<CappedResource, string> = {
  webhookEndpoints: 'delete one first',
  activeApiKeys: 'revoke one first',
  activePaymentLinks: 'deactivate one first',
  graphqlDocuments: 'delete some first',
};

/** 400 invalid_request naming the cap, so an integrator sees what to do rather than a bare refusal. */
export function capReached(resource: CappedResource): ApiError {
  const max = ACCOUNT_CAPS[resource];
  return ApiError.invalid(`This account already has ${max} ${NOUN[resource]}, the most allowed; ${FREE_ONE[resource]}.`);
}
