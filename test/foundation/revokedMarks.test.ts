import mongoose from 'mongoose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashSecret } from '../../src/domain/accounts/secrets';
import {
  countKeyAndAccountRequest,
  KEY_RECHECK_MS,
  markKeyRevoked,
  pruneRevokedMarks,
  REVOKED_MARK_KEPT_MS,
} from '../../src/domain/ratelimit/rateLimitService';
import { createAccount, type TestAccount } from '../support/accounts';
import { type TestServer } from '../support/server';
import { sharedGateway } from '../support/server';

/**
 * A revocation marks the key in its account's document first (every process's next count refuses it),
 * and the mark goes a few minutes later, at a later revocation, once the key's own record refuses it:
 * the account's document, which every request of the account reads and writes, keeps the last few
 * minutes' marks, not every key ever revoked (src/domain/ratelimit/rateLimitService.ts). For the marks
 * to go, a process must not go on for ever with a key's record as it read it: it reads it again after
 * KEY_RECHECK_MS.
 */
let server: TestServer;
let acct: TestAccount;
const limits = { perKey: 1_000, perAccount: 10_000 };

beforeAll(async () => {
  server = await sharedGateway();
  acct = await createAccount(server.baseUrl);
});
afterAll(async () => server?.stop());

interface StoredAccount {
  revoked_keys?: Record<string, Date>;
  key_rates?: Record<string, unknown>;
}
const stored = async () => (await mongoose.connection.collection('accounts').findOne({ _id: acct.id as never })) as unknown as StoredAccount;

async function restrictedKey(): Promise<{ id: string; secret: string }> {
  const res = await acct.api.post('/api_keys', { name: 'churn', permissions: ['payment_intents:read'] });
  expect(res.status).toBe(201);
  return { id: res.body.id, secret: res.body.secret };
}

const listWith = (secret: string) => fetch(`${server.baseUrl}/v1/payment_intents?limit=1`, { headers: { authorization: `Bearer ${secret}` } });

describe('revoked-key marks', () => {
  it('are kept while a process may still know the key, then dropped with the key\'s window; the key stays refused', async () => {
    const key = await restrictedKey();
    expect((await listWith(key.secret)).status).toBe(200);
    expect((await acct.api.delete(`/api_keys/${key.id}`)).status).toBe(200);
    const marked = await stored();
    expect(marked.revoked_keys?.[key.id]).toBeInstanceOf(Date);

    // Minutes later no longer than a process may go on with the record it read: kept.
    expect(await pruneRevokedMarks(acct.id, Date.now() + KEY_RECHECK_MS)).toBe(0);
    expect((await stored()).revoked_keys?.[key.id]).toBeInstanceOf(Date);

    // Past it, the mark goes, with any window of the key.
    await mongoose.connection.collection('accounts').updateOne({ _id: acct.id as never }, { $set: { [`key_rates.${key.id}`]: { count: 1, end: new Date() } } });
    expect(await pruneRevokedMarks(acct.id, Date.now() + REVOKED_MARK_KEPT_MS + 1_000)).toBe(1);
    const after = await stored();
    expect(after.revoked_keys?.[key.id]).toBeUndefined();
    expect(after.key_rates?.[key.id]).toBeUndefined();
    // The key's own record refuses it.
    const refused = await listWith(key.secret);
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('authentication_failed');
  });

  it('are kept when the key\'s own record was never marked (a crash between the two writes): the mark alone refuses it', async () => {
    const key = await restrictedKey();
    await markKeyRevoked(acct.id, key.id, new Date(Date.now() - REVOKED_MARK_KEPT_MS - 60_000));
    expect(await pruneRevokedMarks(acct.id)).toBe(0);
    expect((await stored()).revoked_keys?.[key.id]).toBeInstanceOf(Date);
    expect((await listWith(key.secret)).status).toBe(401);
  });

  it('a revocation prunes the marks of earlier ones', async () => {
    const old = await restrictedKey();
    expect((await acct.api.delete(`/api_keys/${old.id}`)).status).toBe(200);
    // As if the revocation had been made minutes ago.
    await mongoose.connection.collection('accounts').updateOne(
      { _id: acct.id as never },
      { $set: { [`revoked_keys.${old.id}`]: new Date(Date.now() - REVOKED_MARK_KEPT_MS - 1_000) } },
    );
    const now = await restrictedKey();
    expect((await acct.api.delete(`/api_keys/${now.id}`)).status).toBe(200);
    const marks = (await stored()).revoked_keys ?? {};
    expect(marks[old.id]).toBeUndefined();
    expect(marks[now.id]).toBeInstanceOf(Date);
  });

  it('a process reads a key it knows again after KEY_RECHECK_MS, so its record refuses it without the mark', async () => {
    const key = await restrictedKey();
    const hash = hashSecret(key.secret);
    const t0 = Date.now();
    expect(await countKeyAndAccountRequest(hash, limits, t0)).not.toBeNull();
    // Revoked in its record only: what another process's revocation looks like once its mark is gone.
    await mongoose.connection.collection('api_keys').updateOne({ _id: key.id as never }, { $set: { revoked_at: new Date() } });
    // Within KEY_RECHECK_MS this process goes on with the record it read (this is why marks are kept that long).
    expect((await countKeyAndAccountRequest(hash, limits, t0 + 1_000))?.key._id).toBe(key.id);
    expect(await countKeyAndAccountRequest(hash, limits, t0 + KEY_RECHECK_MS)).toBeNull();
  });
});
