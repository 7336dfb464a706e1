// An HTTP subscription stream's maximum lifetime (SSE_MAX_LIFETIME_SECONDS) and the per-message size cap
// (GRAPHQL_MAX_RESPONSE_BYTES), on a gateway with both set low.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, type TestAccount } from '../support/accounts';
import { createPayment, referenceBody } from '../support/payments';
import { sharedGateway, type TestServer } from '../support/server';
import { UPDATES, within } from './httpSubscriptionSupport';

let server: TestServer;
let acct: TestAccount;
beforeAll(async () => {
  server = await sharedGateway({ SSE_MAX_LIFETIME_SECONDS: '2', GRAPHQL_MAX_RESPONSE_BYTES: '4096' });
  acct = await createAccount(server.baseUrl);
});
afterAll(async () => {
  await server?.stop();
});

function subscribe(accept: string, query: string, id: string): Promise<Response> {
  return fetch(`${server.baseUrl}/graphql`, {
    method: 'POST',
    headers: { authorization: `Bearer ${acct.sk}`, 'content-type': 'application/json', accept },
    body: JSON.stringify({ query, variables: { id } }),
  });
}

describe('HTTP subscription limits', () => {
  it('at its lifetime an SSE stream ends without complete (the client subscribes again)', async () => {
    const payment = await createPayment(acct.api, referenceBody());
    const res = await subscribe('text/event-stream', UPDATES, payment.id);
    expect(res.status).toBe(200);
    const text = await within('the end at the lifetime', res.text());
    expect(text).toContain('"snapshot":true');
    expect(text).toContain(': stream lifetime reached; subscribe again');
    expect(text).not.toContain('event: complete');
  });

  it('at its lifetime a multipart stream ends with a transport error, then the close delimiter', async () => {
    const payment = await createPayment(acct.api, referenceBody());
    const res = await subscribe('multipart/mixed;subscriptionSpec=1.0', UPDATES, payment.id);
    const text = await within('the end at the lifetime', res.text());
    expect(text.endsWith('\r\n--graphql--\r\n')).toBe(true);
    const parts = text.split('\r\n--graphql').slice(1, -1);
    const last = JSON.parse(parts.at(-1)!.slice(parts.at(-1)!.indexOf('\r\n\r\n') + 4));
    expect(last.payload).toBeNull();
    expect(last.errors[0]).toMatchObject({ message: 'stream lifetime reached; subscribe again', extensions: { code: 'service_unavailable' } });
  });

  it('a message over the size cap is sent as the error "Response too large" instead', async () => {
    const metadata = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`k${i}`, 'x'.repeat(400)]));
    const payment = await createPayment(acct.api, referenceBody(25_000, { metadata }));
    const res = await subscribe('text/event-stream', 'subscription($id: ID!) { paymentIntentUpdated(id: $id) { paymentIntent { id metadata } } }', payment.id);
    const text = await within('the stream', res.text());
    const first = text.split('\n\n').find((e) => e.startsWith('event: next'))!;
    const result = JSON.parse(first.slice('event: next\ndata: '.length));
    expect(result.data).toBeUndefined();
    expect(result.errors[0].extensions.code).toBe('invalid_request');
    expect(result.errors[0].message).toMatch(/^Response too large/);
  });
});
