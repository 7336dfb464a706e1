import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { v1Mount } from '../../src/rest/apiEntry';
import { isPath } from '../../src/http/paths';
import { createAccount, idempotencyKey } from '../support/accounts';
import { sharedGateway, type TestServer } from '../support/server';
import { waitFor } from '../support/wait';

/**
 * The server's listener takes /v1 requests to the API without the Express app's router
 * (src/rest/apiEntry.ts). What the router's `app.use('/v1', api)` did must still hold: the mount in any
 * case, ending at `/`, `?` or the path's end; the API's 404 for what it does not serve, counted; the
 * app's own 404 for what only looks like /v1; errors answered by the app's error handler in the
 * envelope; the log naming the path as sent. (These expectations were checked against the router's
 * mount, the tree before.)
 */
let server: TestServer;
let acct: Awaited<ReturnType<typeof createAccount>>;
let intentId: string;
beforeAll(async () => {
  server = await sharedGateway();
  acct = await createAccount(server.baseUrl);
  const intent = await acct.api.post('/payment_intents', { amount: 1000, currency: 'AOA', payment_method: 'multicaixa_reference' }, { idempotencyKey: idempotencyKey() });
  expect(intent.status, intent.text).toBe(201);
  intentId = (intent.body as { id: string }).id;
});
afterAll(async () => server?.stop());

describe('v1Mount', () => {
  it('finds /v1 in any case, ending at a slash, a query or the end, and nothing else', () => {
    for (const url of ['/v1', '/v1/', '/V1/payment_intents', '/v1?limit=2', '/v1/payment_intents?x=1']) expect(v1Mount(url), url).toBe(3);
    for (const url of ['/', '', '/v', '/v10', '/v1x/payment_intents', '/v2/payment_intents', '//v1/payment_intents', '/graphql', 'v1/payment_intents', '/%761/payment_intents']) {
      expect(v1Mount(url), url).toBe(0);
    }
  });
});

describe('isPath', () => {
  it('compares a path as Express does: any case, one trailing slash, the query aside', () => {
    for (const url of ['/graphql', '/GraphQL', '/graphql/', '/graphql?x=1', '/graphql/?x=/']) expect(isPath(url, '/graphql'), url).toBe(true);
    for (const url of ['/graphql//', '/graphqlx', '/graph', '/v1/graphql', '/graphql/x', '']) expect(isPath(url, '/graphql'), url).toBe(false);
  });
});

describe('a gateway answering through its listener', () => {
  const auth = () => ({ authorization: `Bearer ${acct.sk}` });
  const errorCode = async (res: Response) => ((await res.json()) as { error?: { code?: string; message?: string; request_id?: string } }).error;

  it('serves an operation under /V1 as under /v1, and its log names the path as sent', async () => {
    const lower = await fetch(`${server.baseUrl}/v1/payment_intents/${intentId}`, { headers: auth() });
    const upper = await fetch(`${server.baseUrl}/V1/payment_intents/${intentId}`, { headers: auth() });
    expect(lower.status).toBe(200);
    expect(upper.status).toBe(200);
    expect(await upper.json()).toEqual(await lower.json());
    for (const res of [lower, upper]) {
      expect(res.headers.get('request-id')).toMatch(/^req_/);
      expect(res.headers.get('x-ratelimit-limit')).not.toBeNull();
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    }
    const requestId = upper.headers.get('request-id');
    // The entry is written with the next flush: wait for it (log entries carry their request's id).
    const entry = await waitFor(async () => {
      const list = await acct.api.get('/logs?limit=20');
      return (list.body as { data: Array<{ request_id: string; path: string }> }).data.find((e) => e.request_id === requestId);
    }, (e) => e !== undefined);
    expect(entry?.path).toBe(`/V1/payment_intents/${intentId}`);
  });

  it('serves POST /graphql under any case and with a trailing slash, and GET /graphql still reaches the page', async () => {
    for (const path of ['/graphql', '/GRAPHQL/']) {
      const res = await fetch(`${server.baseUrl}${path}`, {
        method: 'POST',
        headers: { ...auth(), 'content-type': 'application/json' },
        body: JSON.stringify({ query: 'query($id: ID!) { paymentIntent(id: $id) { id } }', variables: { id: intentId } }),
      });
      expect(res.status, path).toBe(200);
      expect(res.headers.get('request-id'), path).toMatch(/^req_/);
      expect(await res.json(), path).toEqual({ data: { paymentIntent: { id: intentId } } });
    }
    const page = await fetch(`${server.baseUrl}/graphql`, { headers: { accept: 'text/html' } });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
  });

  it('answers HEAD without a body and OPTIONS with the methods of the path', async () => {
    const head = await fetch(`${server.baseUrl}/v1/payment_intents/${intentId}`, { method: 'HEAD', headers: auth() });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
    const options = await fetch(`${server.baseUrl}/v1/payment_intents`, { method: 'OPTIONS' });
    expect(options.headers.get('allow')).toBe('GET, HEAD, POST');
  });

  it("answers /v1 itself, and /v1 with a query, with the API's 404, counted against the key", async () => {
    for (const path of ['/v1', '/v1/', '/v1?limit=2']) {
      const res = await fetch(`${server.baseUrl}${path}`, { headers: auth() });
      expect(res.status, path).toBe(404);
      expect(res.headers.get('x-ratelimit-remaining'), path).not.toBeNull();
      const error = await errorCode(res);
      expect(error?.code, path).toBe('resource_not_found');
      expect(error?.message, path).toBe('Unrecognized request URL (GET /v1/)');
      expect(error?.request_id, path).toBe(res.headers.get('request-id'));
    }
  });

  it("answers a path that only starts like /v1 with the app's 404, not the API's", async () => {
    const res = await fetch(`${server.baseUrl}/v1x/payment_intents`, { headers: auth() });
    expect(res.status).toBe(404);
    expect(res.headers.get('x-ratelimit-limit')).toBeNull();
    const error = await errorCode(res);
    expect(error?.code).toBe('resource_not_found');
    expect(error?.message).toBe('Unrecognized request URL (GET /v1x/payment_intents)');
  });

  it("answers the API's errors through the app's error handler, in the envelope", async () => {
    const undecodable = await fetch(`${server.baseUrl}/v1/payment_intents/%zz`, { headers: auth() });
    expect(undecodable.status).toBe(404);
    expect((await errorCode(undecodable))?.code).toBe('resource_not_found');
    const keyless = await fetch(`${server.baseUrl}/v1/payment_intents/${intentId}`);
    expect(keyless.status).toBe(401);
    expect(keyless.headers.get('x-ratelimit-limit')).not.toBeNull();
    expect((await errorCode(keyless))?.code).toBe('authentication_failed');
    const badJson = await fetch(`${server.baseUrl}/v1/payment_intents`, {
      method: 'POST',
      headers: { ...auth(), 'content-type': 'application/json', 'idempotency-key': idempotencyKey() },
      body: '{"amount":',
    });
    expect(badJson.status).toBe(400);
    expect((await errorCode(badJson))?.code).toBe('invalid_json');
  });
});

describe('prototypes', () => {
  /**
   * Express's app.handle changes the prototype of every request and response, which costs V8 a new map
   * per object and slows every later lookup on them (docs/decisions/0003): the server makes them with
   * the app's prototypes instead, so the API's requests change none. The app's other routes still do.
   */
  it("changes no request's or response's prototype on the API's routes, as Express does on the others", async () => {
    const original = Object.setPrototypeOf;
    const changed: string[] = [];
    Object.setPrototypeOf = ((target: object, proto: object | null) => {
      if (target instanceof http.IncomingMessage) changed.push(`request ${(target as http.IncomingMessage).url}`);
      if (target instanceof http.ServerResponse) changed.push(`response ${(target as http.ServerResponse).req?.url}`);
      return original(target, proto);
    }) as typeof Object.setPrototypeOf;
    try {
      const get = await fetch(`${server.baseUrl}/v1/payment_intents/${intentId}`, { headers: { authorization: `Bearer ${acct.sk}` } });
      expect(get.status).toBe(200);
      const graphql = await fetch(`${server.baseUrl}/graphql`, {
        method: 'POST',
        headers: { authorization: `Bearer ${acct.sk}`, 'content-type': 'application/json' },
        body: JSON.stringify({ query: '{ __typename }' }),
      });
      expect(graphql.status).toBe(200);
      expect(changed).toEqual([]);
      // The probe goes through the Express app, which sets them itself: the spy sees that.
      expect((await fetch(`${server.baseUrl}/healthz`)).status).toBe(200);
      expect(changed).toEqual(['request /healthz', 'response /healthz']);
    } finally {
      Object.setPrototypeOf = original;
    }
  });
});
