import { ApiError } from '../../errors';
import { newId, randomDigits } from '../../ids';
import { AccountModel, type AccountRecord } from './accountModel';
import { ApiKeyModel, type ApiKeyRecord } from './apiKeyModel';
import { hashSecret, newKeySecret } from './secrets';
import { accountCreated } from '../overview/rollupWrites';

export interface SandboxAccountResource {
  object: 'sandbox_account';
  id: string;
  name: string;
  email: string | null;
  pk: string;
  sk: string;
  livemode: false;
  created_at: string;
}

export interface AccountResource {
  object: 'account';
  id: string;
  name: string;
  email: string | null;
  livemode: false;
  created_at: string;
  reference_entity: string;
}

const DEFAULT_ACCOUNT_NAME = 'Sandbox account';

/**
 * Creates an account with one full secret key and one publishable key. The secrets appear only in
 * this response; the database keeps their hashes.
 */
export async function createSandboxAccount(input: { name?: string; email?: string }): Promise<SandboxAccountResource> {
  const now = new Date();
  const account: AccountRecord = {
    _id: newId('acct'),
    name: input.name?.trim() || DEFAULT_ACCOUNT_NAME,
    email: input.email ?? null,
    // Entities are 5 digits and never start with 0, like the ones printed on Multicaixa receipts.
    reference_entity: String(10000 + (Number(randomDigits(5)) % 90000)),
    clock_offset_ms: 0,
    created_at: now,
  };
  const sk = newKeySecret('sk_test_');
  const pk = newKeySecret('pk_test_');
  await AccountModel.create(account);
  await Promise.all([
    ApiKeyModel.insertMany([
      keyRecord(account._id, 'secret', 'Secret key', [], sk, now),
      keyRecord(account._id, 'publishable', 'Publishable key', [], pk, now),
    ]),
    accountCreated(account._id),
  ]);
  return {
    object: 'sandbox_account',
    id: account._id,
    name: account.name,
    email: account.email,
    pk,
    sk,
    livemode: false,
    created_at: now.toISOString(),
  };
}

export function keyRecord(
  accountId: string,
  type: ApiKeyRecord['type'],
  name: string | null,
  permissions: ApiKeyRecord['permissions'],
  secret: string,
  now: Date,
): ApiKeyRecord {
  return {
    _id: newId('key'),
    account_id: accountId,
    type,
    name,
    permissions,
    key_hash: hashSecret(secret),
    last4: secret.slice(-4),
    created_at: now,
    revoked_at: null,
  };
}

export async function getAccount(accountId: string): Promise<AccountRecord> {
  const acct = await AccountModel.findById(accountId).lean<AccountRecord>();
  if (!acct) throw ApiError.notFound('account', accountId);
  return acct;
}

export function toAccountResource(acct: AccountRecord): AccountResource {
  return {
    object: 'account',
    id: acct._id,
    name: acct.name,
    email: acct.email,
    livemode: false,
    created_at: acct.created_at.toISOString(),
    reference_entity: acct.reference_entity,
  };
}
