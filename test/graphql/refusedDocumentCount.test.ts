import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, type TestAccount } from '../support/accounts';
import { type TestServer } from '../support/server';
import { collect, startGraphqlTestServer, wsClient } from './support';

/**
 * A refused document costs the key the same over HTTP and over WebSocket: the caller is counted, then
 * its document is parsed and admitted (one request per mutation field), and only then are the limits
 * and graphql-js's validation applied, on both transports (src/graphql/http.ts, src/graphql/ws.ts).
 * Over WebSocket the mutation fields of a document refused by the limits or by validation were once
 * counted as one request, where HTTP counted each.
 */
let server: TestServer;

beforeAll(async () => {
  server = await startGraphqlTestServer({ RATE_LIMIT_PER_MINUTE: '1000' });
});
afterAll(async () => {
  await server?.stop();
});

/**
 * The documents, each text new to the gateway (`tag`): a text the limits refused once is refused again
 * before it is parsed (refusedDocuments.ts), counted as one request, on both transports (last test).
 */
/** Three mutation fields, each selecting a field PaymentIntent does not have: refused by validation. */
const INVALID = (tag: string) => `mutation { ${['a', 'b', 'c'].map((n) => `${n}: cancelPaymentIntent(id: "pay_${tag}${n}") { nope }`).join(' ')} }`;

/** Three mutation fields, one nested past the depth limit (limits.ts MAX_DEPTH): refused by the limits. */
const deep = (levels: number): string => (levels === 0 ? '{ id }' : `{ refunds { paymentIntent ${deep(levels - 1)} } }`);
const TOO_DEEP = (tag: string) =>
  `mutation { a: cancelPaymentIntent(id: "pay_${tag}a") ${deep(6)} b: cancelPaymentIntent(id: "pay_${tag}b") { id } c: cancelPaymentIntent(id: "pay_${tag}c") { id } }`;

/** What the key has left in its window, read with a REST request (which itself counts one). */
async function remaining(account: TestAccount): Promise<number> {
  const res = await account.api.get('/account');
  expect(res.status).toBe(200);
  return Number(res.headers.get('x-ratelimit-remaining'));
}

async function overHttp(account: TestAccount, query: string): Promise<string[]> {
  const res = await fetch(`${server.baseUrl}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${account.sk}` },
    body: JSON.stringify({ query }),
  });
  const body = (await res.json()) as { errors?: Array<{ extensions?: { code?: string } }> };
  return (body.errors ?? []).map((e) => e.extensions?.code ?? '?');
}

async function overWs(account: TestAccount, query: string): Promise<string[]> {
  const client = wsClient(server.baseUrl, account.sk);
  try {
    const messages = await collect(client, query, {}, () => false, 15_000);
    return messages.flatMap((m) => (m.errors ?? []).map((e: { extensions?: { code?: string } }) => e.extensions?.code ?? '?'));
  } finally {
    await client.dispose();
  }
}

/** Requests the key was charged for sending `query` once (the REST read between counts one). */
async function charged(send: (account: TestAccount, query: string) => Promise<string[]>, query: string): Promise<{ charged: number; codes: string[] }> {
  const account = await createAccount(server.baseUrl);
  const before = await remaining(account);
  const codes = await send(account, query);
  const after = await remaining(account);
  return { charged: before - after - 1, codes };
}

describe('a refused document counts the same over HTTP and WebSocket', () => {
  it.each([
    ['refused by validation', INVALID, 'invalid_request'],
    ['refused by the depth limit', TOO_DEEP, 'invalid_request'],
  ])('%s: each of its three mutation fields is a request on both', async (_name, query, code) => {
    const http = await charged(overHttp, query('http'));
    const ws = await charged(overWs, query('ws'));
    expect(http.codes.length).toBeGreaterThan(0);
    expect(ws.codes.length).toBeGreaterThan(0);
    expect(http.codes[0]).toBe(code);
    expect(ws.codes[0]).toBe(code);
    expect({ http: http.charged, ws: ws.charged }).toEqual({ http: 3, ws: 3 });
  });

  it('a text the limits refused before is refused again before it is parsed: one request on both', async () => {
    const query = TOO_DEEP('again');
    await charged(overHttp, query);
    const http = await charged(overHttp, query);
    const ws = await charged(overWs, query);
    expect(http.codes[0]).toBe('invalid_request');
    expect(ws.codes[0]).toBe('invalid_request');
    expect({ http: http.charged, ws: ws.charged }).toEqual({ http: 1, ws: 1 });
  });
});
