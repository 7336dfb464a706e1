import { driverCollection } from '../../db/driverCollection';
import { ApiError } from '../../errors';
import { newId, randomBase62 } from '../../ids';
import { digestsEqual, hashSecret } from '../accounts/secrets';
import { nowForAccount } from '../clock/accountTime';
import { clientTokenRevoked } from './clientTokenRevocation';
import { getPaymentIntentForAccount } from '../payments/paymentService';
import { ClientTokenModel, type ClientTokenRecord } from './clientTokenModel';
import { toClientTokenResource, type ClientTokenResource } from './clientTokenSerializer';

export const CLIENT_TOKEN_PREFIX = 'ct_test_';
const TOKEN_SHAPE = /^ct_test_[0-9A-Za-z]{32}$/;
export const DEFAULT_EXPIRES_IN_SECONDS = 3600;

/** What a valid token grants: one payment of one account. */
export interface ClientTokenGrant {
  /** `ctok_…`: what logs and rate-limit buckets name the token by (never the secret). */
  id: string;
  accountId: string;
  paymentIntentId: string;
  /** When it stops working, on the account's sandbox clock (open streams end then: src/realtime/clientTokenStreams.ts). */
  expiresAt: Date;
}

const tokens = () => driverCollection<ClientTokenRecord>(ClientTokenModel);

/**
 * The one 401 of every token that does not work: malformed, unknown, revoked, expired, or used for
 * another payment. The message never repeats the token.
 */
export const clientTokenRefused = () =>
  new ApiError('authentication_failed', 'Invalid, expired or revoked client token, or a token minted for another payment.');

/** True when `value` looks like a client token (its prefix), so that it is not mistaken for an API key. */
export function isClientTokenLike(value: string | undefined): value is string {
  return typeof value === 'string' && value.startsWith(CLIENT_TOKEN_PREFIX);
}

/**
 * Mints a token for one of the account's payments (404 for any other id). Its lifetime is counted on
 * the account's sandbox clock, as reference and checkout expiries are: advancing the clock brings it
 * closer, and tests can reach it without waiting.
 */
export async function createClientToken(accountId: string, input: { payment_intent: string; expires_in?: number }): Promise<ClientTokenResource> {
  await getPaymentIntentForAccount(accountId, input.payment_intent);
  const token = CLIENT_TOKEN_PREFIX + randomBase62(32);
  const now = await nowForAccount(accountId);
  const record: ClientTokenRecord = {
    _id: newId('ctok'),
    account_id: accountId,
    payment_intent: input.payment_intent,
    token_hash: hashSecret(token),
    expires_at: new Date(now.getTime() + (input.expires_in ?? DEFAULT_EXPIRES_IN_SECONDS) * 1000),
    created_at: now,
  };
  await ClientTokenModel.create(record);
  return toClientTokenResource(record, token);
}

/** Revokes for good: the document goes, so the token is unknown from now on. */
export async function deleteClientToken(accountId: string, id: string): Promise<void> {
  const { deletedCount } = await tokens().deleteOne({ _id: id, account_id: accountId });
  if (deletedCount !== 1) throw ApiError.notFound('client_token', id);
  clientTokenRevoked(id);
}

/**
 * Resolves a token to what it grants, or throws the 401. Whatever the cause, the answer is the same,
 * so it reveals nothing about which tokens exist.
 */
export async function authenticateClientToken(token: string | undefined): Promise<ClientTokenGrant> {
  if (!token || !TOKEN_SHAPE.test(token)) throw clientTokenRefused();
  const hash = hashSecret(token);
  const record = await tokens().findOne({ token_hash: hash });
  if (!record || !digestsEqual(record.token_hash, hash)) throw clientTokenRefused();
  if (record.expires_at.getTime() <= (await nowForAccount(record.account_id)).getTime()) throw clientTokenRefused();
  return { id: record._id, accountId: record.account_id, paymentIntentId: record.payment_intent, expiresAt: record.expires_at };
}

/** A grant used for a payment: only its own (another payment's id is the same 401 as a bad token). */
export function requireGrantFor(grant: ClientTokenGrant, paymentId: string): void {
  if (grant.paymentIntentId !== paymentId) throw clientTokenRefused();
}

/** The rate-limit bucket of a token: named by its id, so the secret is never a database key. */
export const clientTokenBucket = (tokenId: string) => `ctok:${tokenId}`;
