import { describe, expect, it } from 'vitest';
import { PgwError } from '../src/index';
import { createClientAccount, EXPRESS_SUCCESS, useGateway } from './support';

interface Sent {
  method: string;
  path: string;
  idempotencyKey: string | null;
  status: number;
  retryAfter: string | null;
}

/** A fetch that records what went out and what came back (the real gateway answers). */
function tap(): { sent: Sent[]; fetch: (r: Request) => Promise<Response> } {
  const sent: Sent[] = [];
  return {
    sent,
    fetch: async (request) => {
      const response = await globalThis.fetch(request);
      sent.push({
        method: request.method,
        path: new URL(request.url).pathname,
        idempotencyKey: request.headers.get('idempotency-key'),
        status: response.status,
        retryAfter: response.headers.get('retry-after'),
      });
      return response;
    },
  };
}

async function caught(promise: Promise<unknown>): Promise<PgwError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(PgwError);
  return err as PgwError;
}

describe('@pgw/client retries 429 after Retry-After (a gateway allowing 1 request per minute per key)', () => {
  const gw = useGateway({ RATE_LIMIT_PER_MINUTE: '1' });

  /** A fresh account's client whose waits are recorded and resolve at once: the gateway's window is a minute, the test checks what was asked. */
  async function rateLimitedClient(retry: { maxRetries: number; maxDelayMs: number }) {
    const t = tap();
    const waits: number[] = [];
    const sleep = async (ms: number) => {
      waits.push(ms);
    };
    const { client } = await createClientAccount(gw.server.baseUrl, { fetch: t.fetch, retry: { ...retry, sleep } });
    return { t, waits, client };
  }

  it('waits what each Retry-After says, retries a bounded number of times, keeps the Idempotency-Key, never re-sends a keyless POST', async () => {
    const { t, waits, client } = await rateLimitedClient({ maxRetries: 2, maxDelayMs: 120_000 });
    await client.GET('/account'); // the one request of the window

    const err = await caught(client.GET('/payment_methods'));
    expect(err.status).toBe(429);
    expect(err.code).toBe('rate_limit_exceeded');
    expect(err.retryAfter).toBeGreaterThanOrEqual(1);
    const reads = t.sent.filter((s) => s.path === '/v1/payment_methods');
    expect(reads.map((s) => s.status)).toEqual([429, 429, 429]); // first attempt + 2 retries
    expect(waits).toEqual(reads.slice(0, 2).map((s) => Number(s.retryAfter) * 1000));

    waits.length = 0;
    await caught(client.POST('/payment_intents', { body: EXPRESS_SUCCESS }));
    const creates = t.sent.filter((s) => s.path === '/v1/payment_intents');
    expect(creates).toHaveLength(3);
    expect(new Set(creates.map((s) => s.idempotencyKey)).size).toBe(1); // one key, made before the first attempt
    expect(creates[0]!.idempotencyKey).toMatch(/^.{8,128}$/);
    expect(waits).toHaveLength(2);

    waits.length = 0;
    const linkErr = await caught(client.POST('/payment_links', { body: { amount: 1000 } }));
    expect(linkErr.retryAfter).toBeGreaterThanOrEqual(1);
    expect(t.sent.filter((s) => s.path === '/v1/payment_links')).toHaveLength(1);
    expect(waits).toEqual([]);
  });

  it('does not wait beyond maxDelayMs: a Retry-After longer than that is thrown at once', async () => {
    const { t, waits, client } = await rateLimitedClient({ maxRetries: 5, maxDelayMs: 500 });
    await client.GET('/account');
    const err = await caught(client.GET('/account'));
    expect(err.status).toBe(429);
    expect(t.sent.filter((s) => s.path === '/v1/account').map((s) => s.status)).toEqual([200, 429]);
    expect(waits).toEqual([]);
  });
});

describe('@pgw/client Idempotency-Key made for the caller', () => {
  const gw = useGateway();

  it('a fresh key per call when none is given; replaying the key the client made returns the same object', async () => {
    const t = tap();
    const { client } = await createClientAccount(gw.server.baseUrl, { fetch: t.fetch });
    const { data: first } = await client.POST('/payment_intents', { body: EXPRESS_SUCCESS });
    const { data: second } = await client.POST('/payment_intents', { body: EXPRESS_SUCCESS });
    expect(second.id).not.toBe(first.id);
    const [k1, k2] = t.sent.filter((s) => s.path === '/v1/payment_intents').map((s) => s.idempotencyKey);
    expect(k1).toMatch(/^.{8,128}$/);
    expect(k2).not.toBe(k1);

    const replay = await client.POST('/payment_intents', { params: { header: { 'Idempotency-Key': k1! } }, body: EXPRESS_SUCCESS });
    expect(replay.data.id).toBe(first.id);
    expect(replay.response.headers.get('idempotency-replayed')).toBe('true');
    expect(t.sent.at(-1)!.idempotencyKey).toBe(k1);
  });

  it('POST /refunds gets one too (the contract requires it there); other POSTs get none', async () => {
    const t = tap();
    const { client } = await createClientAccount(gw.server.baseUrl, { fetch: t.fetch });
    const { data: ref } = await client.POST('/payment_intents', { body: { amount: 2000, currency: 'AOA', payment_method: 'multicaixa_reference' } });
    await client.POST('/sandbox/simulate/reference_paid', { body: { reference: ref.reference!.number } });
    const { data: refund } = await client.POST('/refunds', { body: { payment_intent: ref.id, amount: 100 } });
    expect(refund.amount).toBe(100);
    expect(t.sent.find((s) => s.path === '/v1/refunds')!.idempotencyKey).toMatch(/^.{8,128}$/);
    expect(t.sent.find((s) => s.path === '/v1/sandbox/simulate/reference_paid')!.idempotencyKey).toBeNull();
  });
});
