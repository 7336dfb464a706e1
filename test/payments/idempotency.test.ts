import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPaymentIntent } from '../../src/domain/payments/paymentService';
import { IdempotencyModel } from '../../src/domain/idempotency/idempotencyModel';
import { idempotencyScopeId, runIdempotent } from '../../src/domain/idempotency/idempotencyService';
import { createAccount, expectError, expressBody, idempotencyKey, referenceBody, waitFor } from './support/payments';
import { declaredResponseHeaders } from '../support/client';
import { sharedGateway, type TestServer } from '../support/server';

let server: TestServer;
beforeAll(async () => {
  server = await sharedGateway();
});
afterAll(async () => server?.stop());

describe('Idempotency-Key on POST /payment_intents', () => {
  it('replays the same body (key order ignored) with the stored status and body', async () => {
    const { api } = await createAccount(server.baseUrl);
    const key = idempotencyKey();
    const body = { amount: 1500, currency: 'AOA', payment_method: 'multicaixa_express', customer: { mobile: '923000000' }, metadata: { a: '1', b: '2' } };
    const first = await api.post('/payment_intents', body, { idempotencyKey: key });
    expect(first.status).toBe(201);
    const reordered = { metadata: { b: '2', a: '1' }, customer: { mobile: '923000000' }, payment_method: 'multicaixa_express', currency: 'AOA', amount: 1500 };
    const replay = await api.post('/payment_intents', reordered, { idempotencyKey: key });
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotency-replayed')).toBe('true');
    expect(replay.body).toEqual(first.body);
    const list = await api.get('/payment_intents');
    expect(list.body.data).toHaveLength(1);
  });

  it('answers 409 idempotency_conflict for the same key with a different body', async () => {
    const { api } = await createAccount(server.baseUrl);
    const key = idempotencyKey();
    expect((await api.post('/payment_intents', expressBody('923000000', 1000), { idempotencyKey: key })).status).toBe(201);
    expectError(await api.post('/payment_intents', expressBody('923000000', 1001), { idempotencyKey: key }), 409, 'idempotency_conflict');
    expectError(await api.post('/payment_intents', referenceBody(1000), { idempotencyKey: key }), 409, 'idempotency_conflict');
    expect((await api.get('/payment_intents')).body.data).toHaveLength(1);
  });

  it('stores and replays 4xx answers', async () => {
    const { api } = await createAccount(server.baseUrl);
    const key = idempotencyKey();
    const bad = { amount: 1000, currency: 'AOA', payment_method: 'multicaixa_express' };
    const first = await api.post('/payment_intents', bad, { idempotencyKey: key });
    expectError(first, 400, 'invalid_phone_number');
    const replay = await api.post('/payment_intents', bad, { idempotencyKey: key });
    expect(replay.status).toBe(400);
    expect(replay.headers.get('idempotency-replayed')).toBe('true');
    expect(replay.body).toEqual(first.body);
    // The key is spent on that body: a corrected body needs a new key.
    expectError(await api.post('/payment_intents', expressBody(), { idempotencyKey: key }), 409, 'idempotency_conflict');
  });

  it('scopes keys to the account and the path', async () => {
    const a = await createAccount(server.baseUrl);
    const b = await createAccount(server.baseUrl);
    const key = idempotencyKey();
    const ra = await a.api.post('/payment_intents', expressBody(), { idempotencyKey: key });
    const rb = await b.api.post('/payment_intents', expressBody(), { idempotencyKey: key });
    expect(ra.status).toBe(201);
    expect(rb.status).toBe(201);
    expect(rb.headers.get('idempotency-replayed')).toBeNull();
    expect(rb.body.id).not.toBe(ra.body.id);
    // Same key on POST /refunds is another scope: no conflict, its own answer (404 here).
    expectError(await a.api.post('/refunds', { payment_intent: 'pay_000000000000000000000000' }, { idempotencyKey: key }), 404, 'resource_not_found');
  });

  it('50 concurrent creates with one key and body: one intent, 50 answers with its id', async () => {
    const { api } = await createAccount(server.baseUrl);
    const key = idempotencyKey();
    const body = expressBody('923000000', 2500);
    const results = await Promise.all(Array.from({ length: 50 }, () => api.post('/payment_intents', body, { idempotencyKey: key })));
    expect(results.map((r) => r.status)).toEqual(Array(50).fill(201));
    const ids = new Set(results.map((r) => r.body.id));
    expect(ids.size).toBe(1);
    expect(results.filter((r) => r.headers.get('idempotency-replayed') === 'true')).toHaveLength(49);
    const list = await api.get('/payment_intents');
    expect(list.body.data.map((p: any) => p.id)).toEqual([...ids]);
    const events = (await api.get('/events')).body.data;
    expect(events.filter((e: any) => e.type === 'payment.created')).toHaveLength(1);
  });

  it('a retry after a 5xx that struck once the intent was written returns that intent, not a second one', async () => {
    const { api, id: accountId } = await createAccount(server.baseUrl);
    const key = idempotencyKey();
    const body = expressBody('923000000', 3300);
    let written: any;
    const failing = runIdempotent({ accountId, method: 'POST', path: '/payment_intents', key, body, requestId: 'req_test' }, async (attempt) => {
      written = await createPaymentIntent(server.gateway.runtime, { accountId, apiKeyId: null }, body, { idempotency: attempt });
      throw new Error('connection reset while answering');
    });
    await expect(failing).rejects.toThrow('connection reset');
    const retry = await api.post('/payment_intents', body, { idempotencyKey: key });
    expect(retry.status).toBe(201);
    expect(retry.body.id).toBe(written.id);
    expect((await api.get('/payment_intents')).body.data).toHaveLength(1);
    const replay = await api.post('/payment_intents', body, { idempotencyKey: key });
    expect(replay.headers.get('idempotency-replayed')).toBe('true');
    expect(replay.body.id).toBe(written.id);
  });

  it('a claim the database lost after acknowledging it is stored whole with the answer: the key makes one intent', async () => {
    // The claim is acknowledged once applied; an engine whose journal refused it afterwards (a full disk)
    // takes it back while the request goes on (test/faults/diskFull.fault.ts). Deleting it mid-request
    // is the same loss.
    const { api, id: accountId } = await createAccount(server.baseUrl);
    const key = idempotencyKey();
    const body = expressBody('923000000', 3400);
    const scope = idempotencyScopeId({ accountId, method: 'POST', path: '/payment_intents', key });
    const first = await runIdempotent({ accountId, method: 'POST', path: '/payment_intents', key, body, requestId: 'req_test' }, async (attempt) => {
      expect((await IdempotencyModel.deleteOne({ _id: scope })).deletedCount).toBe(1);
      return { status: 201, body: await createPaymentIntent(server.gateway.runtime, { accountId, apiKeyId: null }, body, { idempotency: attempt }) };
    });
    expect(first.status).toBe(201);
    const stored = await IdempotencyModel.findById(scope).lean();
    expect([stored?.state, stored?.account_id, stored?.key, stored?.path]).toEqual(['completed', accountId, key, '/payment_intents']);
    const replay = await api.post('/payment_intents', body, { idempotencyKey: key });
    expect([replay.status, replay.headers.get('idempotency-replayed'), replay.body.id]).toEqual([201, 'true', (first.body as { id: string }).id]);
    expect((await api.get('/payment_intents')).body.data).toHaveLength(1);
  });

  it("a request that lost its key to a takeover leaves the new owner's record as it is", async () => {
    const { id: accountId } = await createAccount(server.baseUrl);
    const key = idempotencyKey();
    const body = referenceBody(4500);
    const scope = idempotencyScopeId({ accountId, method: 'POST', path: '/payment_intents', key });
    const answer = await runIdempotent({ accountId, method: 'POST', path: '/payment_intents', key, body, requestId: 'req_test' }, async () => {
      await IdempotencyModel.updateOne({ _id: scope }, { $set: { owner: 'another-process' } });
      return { status: 201, body: { id: 'pay_lost' } };
    });
    expect(answer.status).toBe(201);
    const stored = await IdempotencyModel.findById(scope).lean();
    expect([stored?.state, stored?.owner, stored?.response_json]).toEqual(['in_progress', 'another-process', null]);
  });

  it('a request whose process died mid-way is taken over when its lease expires, with the same intent', async () => {
    const { api, id: accountId } = await createAccount(server.baseUrl);
    const key = idempotencyKey();
    const body = referenceBody(4400);
    let written: any;
    // The first attempt writes the intent and then never answers (its process "died").
    void runIdempotent({ accountId, method: 'POST', path: '/payment_intents', key, body, requestId: 'req_test' }, async (attempt) => {
      written = await createPaymentIntent(server.gateway.runtime, { accountId, apiKeyId: null }, body, { idempotency: attempt });
      return new Promise(() => undefined);
    });
    const scope = idempotencyScopeId({ accountId, method: 'POST', path: '/payment_intents', key });
    const inProgress = async () => (await IdempotencyModel.findById(scope).lean())?.state === 'in_progress' && written !== undefined;
    await waitFor(inProgress, Boolean, 10_000, 20);
    await IdempotencyModel.updateOne({ _id: scope }, { $set: { lease_until: Date.now() - 1 } });
    const retry = await api.post('/payment_intents', body, { idempotencyKey: key });
    expect(retry.status).toBe(201);
    expect(retry.body.id).toBe(written.id);
    expect((await api.get('/payment_intents')).body.data).toHaveLength(1);
  });
});

describe('replays of stored 4xx answers', () => {
  // The test client fails any answer carrying Idempotency-Replayed where openapi.yaml does not declare it.
  it('POST /refunds: a stored 404 and a stored 409 are replayed with Idempotency-Replayed, which the contract declares', async () => {
    const { api } = await createAccount(server.baseUrl);
    const missing = { payment_intent: 'pay_000000000000000000000000', amount: 100 };
    const key404 = idempotencyKey();
    const first404 = await api.post('/refunds', missing, { idempotencyKey: key404 });
    expectError(first404, 404, 'resource_not_found');
    expect(first404.headers.get('idempotency-replayed')).toBeNull();
    const replay404 = await api.post('/refunds', missing, { idempotencyKey: key404 });
    expectError(replay404, 404, 'resource_not_found');
    expect(replay404.headers.get('idempotency-replayed')).toBe('true');
    expect(replay404.body).toEqual(first404.body);

    // A PENDING payment cannot be refunded: 409, stored under the key.
    const pending = await api.post('/payment_intents', referenceBody(), { idempotencyKey: idempotencyKey() });
    expect(pending.status, pending.text).toBe(201);
    const early = { payment_intent: pending.body.id };
    const key409 = idempotencyKey();
    const first409 = await api.post('/refunds', early, { idempotencyKey: key409 });
    expectError(first409, 409, 'payment_already_processed');
    const replay409 = await api.post('/refunds', early, { idempotencyKey: key409 });
    expectError(replay409, 409, 'payment_already_processed');
    expect(replay409.headers.get('idempotency-replayed')).toBe('true');
    expect(replay409.body).toEqual(first409.body);
  });

  it('the contract declares Idempotency-Replayed on every status an idempotent route stores and replays', () => {
    const replayable = { createPaymentIntent: [201, 400], createRefund: [201, 400, 404, 409] } as const;
    for (const [operationId, statuses] of Object.entries(replayable)) {
      for (const status of statuses) {
        expect(declaredResponseHeaders(operationId, status), `${operationId} ${status}`).toContain('Idempotency-Replayed');
      }
    }
  });
});
