import { describe, expect, it } from 'vitest';
import { createClient, PgwError } from '../src/index';
import { createClientAccount, EXPRESS_SUCCESS, useGateway } from './support';

/** Runs `fn`, which must throw a PgwError, and returns it. */
async function pgwError(fn: () => Promise<unknown>): Promise<PgwError> {
  const err = await fn().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(PgwError);
  return err as PgwError;
}

describe('@pgw/client errors: one PgwError with the stable code and the request id', () => {
  const gw = useGateway();

  it('401: a wrong key is authentication_failed, with the envelope request id (= Request-Id header)', async () => {
    const client = createClient({ baseUrl: gw.server.baseUrl, apiKey: 'sk_test_' + 'x'.repeat(32) });
    const err = await pgwError(() => client.GET('/account'));
    expect(err.status).toBe(401);
    expect(err.code).toBe('authentication_failed');
    expect(err.requestId).toMatch(/^req_/);
    expect(err.requestId).toBe(err.response?.headers.get('request-id'));
    expect(err.message).not.toBe('');
  });

  it('404: an unknown payment intent is resource_not_found', async () => {
    const { client } = await createClientAccount(gw.server.baseUrl);
    const err = await pgwError(() => client.GET('/payment_intents/{id}', { params: { path: { id: 'pay_' + 'A'.repeat(24) } } }));
    expect(err.status).toBe(404);
    expect(err.code).toBe('resource_not_found');
    expect(err.requestId).toMatch(/^req_/);
  });

  it('409: the same Idempotency-Key with another body is idempotency_conflict', async () => {
    const { client } = await createClientAccount(gw.server.baseUrl);
    const header = { 'Idempotency-Key': `order-${Date.now()}-conflict` };
    await client.POST('/payment_intents', { params: { header }, body: EXPRESS_SUCCESS });
    const err = await pgwError(() => client.POST('/payment_intents', { params: { header }, body: { ...EXPRESS_SUCCESS, amount: 6000 } }));
    expect(err.status).toBe(409);
    expect(err.code).toBe('idempotency_conflict');
    expect(err.requestId).toMatch(/^req_/);
  });

  it('no answer at all: status 0, connection_error (a POST without a key is not retried)', async () => {
    // Port 9 (discard) on loopback: nothing listens there in the test environment.
    const client = createClient({ baseUrl: 'http://127.0.0.1:9', retry: { maxRetries: 0 } });
    const err = await pgwError(() => client.POST('/sandbox/accounts', { body: {} }));
    expect(err.status).toBe(0);
    expect(err.code).toBe('connection_error');
    expect(err.requestId).toBeNull();
  });
});
