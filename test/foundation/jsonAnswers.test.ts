import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, idempotencyKey, type TestAccount } from '../support/accounts';
import { type TestServer } from '../support/server';
import { sharedGateway } from '../support/server';

/**
 * The REST pipeline writes JSON answers itself (src/rest/pipeline.ts, sendJson) instead of through
 * Express's res.json: the answers must stay byte for byte what Express sent. Content-Length counts
 * bytes (metadata in Portuguese has multi-byte characters), HEAD has GET's headers and no body, and a
 * conditional request is answered as Express answers it (304 for `If-None-Match: *` on a resource
 * that exists, RFC 9110; 200 for an entity tag, since the gateway sends none).
 */
let server: TestServer;
let acct: TestAccount;
let paymentId: string;
const METADATA = { city: 'Luanda', note: 'pagamento de teste — açaí, café' };

beforeAll(async () => {
  server = await sharedGateway();
  acct = await createAccount(server.baseUrl);
  const created = await acct.api.post(
    '/payment_intents',
    { amount: 2500, currency: 'AOA', payment_method: 'multicaixa_reference', metadata: METADATA },
    { idempotencyKey: idempotencyKey() },
  );
  expect(created.status, created.text).toBe(201);
  paymentId = (created.body as { id: string }).id;
});
afterAll(async () => server?.stop());

function get(path: string, init: RequestInit = {}): Promise<Response> {
  return fetch(`${server.baseUrl}/v1${path}`, { ...init, headers: { authorization: `Bearer ${acct.sk}`, ...(init.headers as Record<string, string>) } });
}

/**
 * A GET with exactly these headers: fetch() adds `Cache-Control: no-cache` to a conditional request
 * (the Fetch standard), which would make every answer a full one.
 */
function rawGet(path: string, headers: Record<string, string>): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.get(`${server.baseUrl}/v1${path}`, { headers: { authorization: `Bearer ${acct.sk}`, ...headers } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
  });
}

async function expectJsonAnswer(res: Response, status: number): Promise<string> {
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
  const text = await res.text();
  expect(Number(res.headers.get('content-length'))).toBe(Buffer.byteLength(text));
  expect(() => JSON.parse(text)).not.toThrow();
  return text;
}

describe('JSON answers', () => {
  it('a read, a list and an error: the JSON content type and a byte-exact Content-Length', async () => {
    const read = await expectJsonAnswer(await get(`/payment_intents/${paymentId}`), 200);
    expect(JSON.parse(read).metadata).toEqual(METADATA);
    // Multi-byte characters: the length in bytes is not the length in characters.
    expect(Buffer.byteLength(read)).toBeGreaterThan(read.length);
    await expectJsonAnswer(await get('/payment_intents?limit=3'), 200);
    const missing = await expectJsonAnswer(await get('/payment_intents/pay_000000000000000000000000'), 404);
    expect(JSON.parse(missing).error.code).toBe('resource_not_found');
  });

  it('a create and its replay: the stored text, 201 both times, the replay marked', async () => {
    const key = idempotencyKey();
    const post = () =>
      fetch(`${server.baseUrl}/v1/payment_intents`, {
        method: 'POST',
        headers: { authorization: `Bearer ${acct.sk}`, 'content-type': 'application/json', 'idempotency-key': key },
        body: JSON.stringify({ amount: 1200, currency: 'AOA', payment_method: 'multicaixa_reference', metadata: METADATA }),
      });
    const first = await post();
    const firstText = await expectJsonAnswer(first, 201);
    expect(first.headers.get('idempotency-replayed')).toBeNull();
    const again = await post();
    expect(await expectJsonAnswer(again, 201)).toBe(firstText);
    expect(again.headers.get('idempotency-replayed')).toBe('true');
  });

  it("HEAD: GET's status and headers, no body", async () => {
    const full = await get(`/payment_intents/${paymentId}`);
    const text = await full.text();
    const head = await get(`/payment_intents/${paymentId}`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(head.headers.get('content-length')).toBe(String(Buffer.byteLength(text)));
    expect(await head.text()).toBe('');
  });

  it('conditional GETs are answered as Express answers them', async () => {
    const any = await rawGet(`/payment_intents/${paymentId}`, { 'if-none-match': '*' });
    expect(any.status).toBe(304);
    expect(any.headers['content-type']).toBeUndefined();
    expect(any.headers['content-length']).toBeUndefined();
    expect(any.body).toBe('');
    // Cache-Control: no-cache asks for the answer itself.
    expect((await rawGet(`/payment_intents/${paymentId}`, { 'if-none-match': '*', 'cache-control': 'no-cache' })).status).toBe(200);
    // The gateway sends no entity tag, so no tag of the client's can match.
    const tagged = await rawGet(`/payment_intents/${paymentId}`, { 'if-none-match': '"abc"' });
    expect(tagged.status).toBe(200);
    expect(Number(tagged.headers['content-length'])).toBe(Buffer.byteLength(tagged.body));
    // No Last-Modified either: a date does not make the answer fresh.
    const dated = await rawGet(`/payment_intents/${paymentId}`, { 'if-modified-since': new Date().toUTCString() });
    expect(dated.status).toBe(200);
    expect(dated.headers['content-type']).toBe('application/json; charset=utf-8');
  });
});
