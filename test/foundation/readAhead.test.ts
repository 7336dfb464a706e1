import mongoose from 'mongoose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countsKnownKeyAtOnce } from '../../src/domain/accounts/apiKeyService';
import { hashSecret } from '../../src/domain/accounts/secrets';
import { countKeyAndAccountRequest } from '../../src/domain/ratelimit/rateLimitService';
import { createAccount, idempotencyKey, type TestAccount } from '../support/accounts';
import { commandLog } from '../support/commandLog';
import { type TestServer } from '../support/server';
import { sharedGateway } from '../support/server';

/**
 * A GET of a payment reads it beside the key's rate-limit count (src/operations/prefetch.ts, beforeCount), once the
 * process knows the key and did not refuse it last time: the read's result must never reach a request
 * that the count, the key or the input refuses, and another account's payment stays a 404.
 */
let server: TestServer;
let acct: TestAccount;
let other: TestAccount;
let paymentId: string;

beforeAll(async () => {
  server = await sharedGateway();
  acct = await createAccount(server.baseUrl);
  other = await createAccount(server.baseUrl);
  const created = await acct.api.post('/payment_intents', { amount: 3100, currency: 'AOA', payment_method: 'multicaixa_reference' }, { idempotencyKey: idempotencyKey() });
  expect(created.status, created.text).toBe(201);
  paymentId = (created.body as { id: string }).id;
});
afterAll(async () => server?.stop());

const getWith = (secret: string, id = paymentId) => fetch(`${server.baseUrl}/v1/payment_intents/${id}`, { headers: { authorization: `Bearer ${secret}` } });

async function restrictedKey(owner: TestAccount): Promise<{ id: string; secret: string }> {
  const res = await owner.api.post('/api_keys', { name: 'read ahead', permissions: ['payment_intents:read'] });
  expect(res.status, res.text).toBe(201);
  return { id: res.body.id, secret: res.body.secret };
}

describe('the count says when a read goes out beside it', () => {
  it('not for a key this process has not read yet, then for every count of it, and not after a refusal', async () => {
    const key = await restrictedKey(acct);
    const hash = hashSecret(key.secret);
    const beside: boolean[] = [];
    const count = (perKey = 1_000) => {
      beside.push(countsKnownKeyAtOnce(key.secret));
      return countKeyAndAccountRequest(hash, { perKey, perAccount: 10_000 });
    };
    expect((await count())?.decision.allowed).toBe(true);
    expect(beside).toEqual([false]);
    expect((await count())?.decision.allowed).toBe(true);
    expect(beside).toEqual([false, true]);
    // Over a limit of 2 per minute: refused, and the next count reads nothing beside it.
    expect((await count(2))?.decision.allowed).toBe(false);
    expect((await count(2))?.decision.allowed).toBe(false);
    expect(beside).toEqual([false, true, true, false]);
    // Let through again (a higher limit): the count after that one reads beside it again.
    expect((await count())?.decision.allowed).toBe(true);
    expect((await count())?.decision.allowed).toBe(true);
    expect(beside).toEqual([false, true, true, false, false, true]);
    expect(countsKnownKeyAtOnce(undefined)).toBe(false);
    expect(countsKnownKeyAtOnce('sk_test_' + '0'.repeat(32))).toBe(false);
  });
});

describe('the read beside the count shares its round trip', () => {
  it("a known key's GET sends the payment's find before the count is answered, and reads it once", async () => {
    expect((await getWith(acct.sk)).status).toBe(200);
    const log = await commandLog(async () => expect((await getWith(acct.sk)).status).toBe(200));
    const sentFind = log.indexOf('sent find payment_intents');
    expect(sentFind).toBeGreaterThanOrEqual(0);
    expect(sentFind).toBeLessThan(log.indexOf('answered findAndModify accounts'));
    expect(log.filter((l) => l === 'sent find payment_intents')).toHaveLength(1);
  });

  it('an unknown secret reads no payment; a key refused last time reads it only once counted', async () => {
    const unknown = await commandLog(() => getWith('sk_test_' + 'Z'.repeat(32)));
    expect(unknown.filter((l) => l.includes('payment_intents'))).toEqual([]);

    const key = await restrictedKey(acct);
    const hash = hashSecret(key.secret);
    // Known to this process and refused by its last count (a limit of 1 per minute, used twice).
    await countKeyAndAccountRequest(hash, { perKey: 1, perAccount: 10_000 });
    expect((await countKeyAndAccountRequest(hash, { perKey: 1, perAccount: 10_000 }))?.decision.allowed).toBe(false);
    // The gateway's own limit lets this GET through: its handler reads the payment, after the count.
    const refused = await commandLog(async () => expect((await getWith(key.secret)).status).toBe(200));
    expect(refused.indexOf('sent find payment_intents')).toBeGreaterThan(refused.indexOf('answered findAndModify accounts'));
  });
});

describe('GET /payment_intents/{id} with the read ahead', () => {
  it("answers the payment, the same on every request of a known key", async () => {
    const first = await getWith(acct.sk);
    const again = await getWith(acct.sk);
    expect(first.status).toBe(200);
    expect(again.status).toBe(200);
    expect(((await again.json()) as { id: string }).id).toBe(paymentId);
  });

  it("another account's known key gets 404, exactly as for a payment that does not exist", async () => {
    expect((await getWith(other.sk, 'pay_000000000000000000000000')).status).toBe(404);
    const res = await getWith(other.sk);
    expect(res.status).toBe(404);
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('resource_not_found');
    expect(JSON.stringify(body)).not.toContain('3100');
  });

  it('a known key, then revoked: 401, never the payment read beside its count', async () => {
    const key = await restrictedKey(acct);
    expect((await getWith(key.secret)).status).toBe(200);
    expect((await getWith(key.secret)).status).toBe(200);
    expect((await acct.api.delete(`/api_keys/${key.id}`)).status).toBe(200);
    const res = await getWith(key.secret);
    expect(res.status).toBe(401);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('authentication_failed');
  });

  it('a path id outside the contract: 404, as without the read', async () => {
    expect((await getWith(acct.sk)).status).toBe(200);
    const res = await getWith(acct.sk, 'not-an-id');
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('resource_not_found');
  });

  it('a payment changed just before the GET is read as it is now', async () => {
    expect((await getWith(acct.sk)).status).toBe(200);
    await mongoose.connection.collection('payment_intents').updateOne({ _id: paymentId as never }, { $set: { merchant_reference: 'changed-before-get' } });
    const res = await getWith(acct.sk);
    expect(((await res.json()) as { merchant_reference: string }).merchant_reference).toBe('changed-before-get');
  });
});

describe('GraphQL paymentIntent(id) with the read ahead', () => {
  it('two fields of one query, two ids: each answers its own payment, not the one read ahead', async () => {
    const created = await acct.api.post('/payment_intents', { amount: 4200, currency: 'AOA', payment_method: 'multicaixa_reference' }, { idempotencyKey: idempotencyKey() });
    expect(created.status, created.text).toBe(201);
    const secondId = (created.body as { id: string }).id;
    const ask = () =>
      fetch(`${server.baseUrl}/graphql`, {
        method: 'POST',
        headers: { authorization: `Bearer ${acct.sk}`, 'content-type': 'application/json' },
        body: JSON.stringify({ query: `{ a: paymentIntent(id: "${paymentId}") { id amount } b: paymentIntent(id: "${secondId}") { id amount } }` }),
      });
    await ask(); // the key known to this process: the next request reads ahead
    const res = await ask();
    const body = (await res.json()) as { data: { a: { id: string; amount: number }; b: { id: string; amount: number } } };
    expect(body.data.a).toEqual({ id: paymentId, amount: 3100 });
    expect(body.data.b).toEqual({ id: secondId, amount: 4200 });
  });
});
