import { createHash } from 'node:crypto';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintToken, createExpressPayment } from '../clientTokens/support';
import { createAccount, idempotencyKey, type TestAccount } from '../support/accounts';
import { startReceiver, type Receiver } from '../support/receiver';
import { type TestServer } from '../support/server';
import { startGraphqlTestServer } from './support';

/**
 * One admission rule per operation, whatever the transport (src/operations/admit.ts,
 * src/graphql/documentRules.ts): each rule is run through HTTP POST, HTTP GET, an automatic persisted
 * query's hash (registered by the caller under test, then sent alone: persisted queries are kept per
 * account and credential kind, src/graphql/persistedQueries.ts), and
 * WebSocket. Then the probes that found the gaps: a client token through APQ, 400 aliased creations,
 * 50 aliased test webhooks, 10,000 nested brackets.
 */
let server: TestServer;
let baseUrl: string;
let receiver: Receiver;

beforeAll(async () => {
  receiver = await startReceiver();
  server = await startGraphqlTestServer({ ACCOUNT_CREATION_PER_MINUTE: '1000', RATE_LIMIT_PER_MINUTE: '1000' });
  baseUrl = server.baseUrl;
});
afterAll(async () => {
  await server?.stop();
  await receiver?.close();
});

type Credential = { key: string } | { token: string } | null;
type Transport = 'POST' | 'GET' | 'APQ' | 'WS';
const TRANSPORTS: Transport[] = ['POST', 'GET', 'APQ', 'WS'];

interface Outcome {
  /** HTTP status (WebSocket: 200 once the operation ran or was refused with errors). */
  status: number;
  codes: string[];
  messages: string[];
  data: any;
  headers?: Headers;
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const authHeader = (who: Credential): Record<string, string> =>
  who === null ? {} : { authorization: `Bearer ${'key' in who ? who.key : who.token}` };

async function http(method: 'GET' | 'POST', who: Credential, body: Record<string, unknown>): Promise<Outcome> {
  let res: Response;
  if (method === 'GET') {
    const search = new URLSearchParams();
    for (const [name, value] of Object.entries(body)) if (value !== undefined) search.set(name, typeof value === 'string' ? value : JSON.stringify(value));
    res = await fetch(`${baseUrl}/graphql?${search}`, { headers: { accept: 'application/json', ...authHeader(who) } });
  } else {
    res = await fetch(`${baseUrl}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', ...authHeader(who) }, body: JSON.stringify(body) });
  }
  const json = (await res.json()) as { data?: unknown; errors?: Array<{ message: string; extensions?: { code?: string } }> };
  return {
    status: res.status,
    codes: (json.errors ?? []).map((e) => e.extensions?.code ?? '?'),
    messages: (json.errors ?? []).map((e) => e.message),
    data: json.data,
    headers: res.headers,
  };
}

async function overWebSocket(who: Credential, payload: { query: string; variables?: Record<string, unknown>; extensions?: unknown }): Promise<Outcome> {
  const client = createClient({
    url: `${baseUrl.replace(/^http/, 'ws')}/graphql`,
    webSocketImpl: WebSocket,
    connectionParams: who === null ? {} : 'key' in who ? { authorization: `Bearer ${who.key}` } : { clientToken: who.token },
    retryAttempts: 0,
    lazy: true,
  });
  try {
    const messages = await new Promise<Array<{ data?: any; errors?: any[] }>>((resolve, reject) => {
      const got: Array<{ data?: any; errors?: any[] }> = [];
      const timer = setTimeout(() => reject(new Error('no answer over WebSocket in 20 s')), 20_000);
      const done = () => {
        clearTimeout(timer);
        resolve(got);
      };
      client.subscribe(
        { query: payload.query, variables: payload.variables ?? {}, ...(payload.extensions ? { extensions: payload.extensions as Record<string, unknown> } : {}) },
        {
          next: (msg) => {
            got.push(msg as { data?: any; errors?: any[] });
            done();
          },
          error: (err) => {
            if (Array.isArray(err)) got.push({ errors: err });
            else return reject(err instanceof Error ? err : new Error(JSON.stringify(err)));
            done();
          },
          complete: done,
        },
      );
    });
    const errors = messages.flatMap((m) => m.errors ?? []);
    return { status: 200, codes: errors.map((e) => e.extensions?.code ?? '?'), messages: errors.map((e) => e.message), data: messages[0]?.data };
  } finally {
    await client.dispose();
  }
}

/** Runs one operation through a transport. APQ: `who` registers the text, then sends the hash alone. */
async function run(transport: Transport, who: Credential, query: string, variables?: Record<string, unknown>): Promise<Outcome> {
  switch (transport) {
    case 'POST':
      return http('POST', who, { query, variables });
    case 'GET':
      return http('GET', who, { query, variables });
    case 'APQ': {
      const persistedQuery = { version: 1, sha256Hash: sha256(query) };
      const registered = await http('POST', who, { query, variables, extensions: { persistedQuery } });
      // A document `who` may not run is refused again when its hash comes alone: say what that answers.
      if (registered.status !== 200 && registered.codes[0] !== 'permission_denied') return registered;
      return http('POST', who, { variables, extensions: { persistedQuery } });
    }
    case 'WS':
      return overWebSocket(who, { query, variables });
  }
}

async function keyRemaining(acct: TestAccount): Promise<number> {
  const res = await acct.api.get('/account');
  expect(res.status).toBe(200);
  return Number(res.headers.get('x-ratelimit-remaining'));
}

const CREATE = (n: number) =>
  `mutation(${Array.from({ length: n }, (_, i) => `$k${i}: String!`).join(', ')}) {\n${Array.from(
    { length: n },
    (_, i) => `  c${i}: createPaymentIntent(input: { amount: 1000, currency: "AOA", paymentMethod: MULTICAIXA_REFERENCE }, idempotencyKey: $k${i}) { id }`,
  ).join('\n')}\n}`;
const keysFor = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, idempotencyKey()]));

async function paymentCount(acct: TestAccount): Promise<number> {
  const res = await acct.api.get('/payment_intents?limit=100');
  expect(res.status).toBe(200);
  return res.body.data.length;
}

describe.each(TRANSPORTS)('over %s', (transport) => {
  it("a client token runs only its payment's public view: anything else is permission_denied", async () => {
    const acct = await createAccount(baseUrl);
    const payment = await createExpressPayment(acct);
    const { token } = await mintToken(acct, payment.id);
    // A token's hashes register automatically only where its trusted-documents mode is off (audit by default).
    if (transport === 'APQ') expect((await acct.api.put('/graphql/settings', { trusted_documents: { client_token: 'off' } })).status).toBe(200);
    const own = await run(transport, { token }, 'query($id: ID!) { paymentIntent(id: $id) { id status } }', { id: payment.id });
    expect(own.codes).toEqual([]);
    expect(own.data.paymentIntent).toEqual({ id: payment.id, status: expect.any(String) });
    const other = await run(transport, { token }, '{ account { id name } }', undefined);
    expect(other.codes).toEqual(['permission_denied']);
    if (transport !== 'WS') expect(other.status).toBe(403);
    expect(other.data?.account ?? null).toBeNull();
  });

  it("a restricted key needs the permission of the operation each field mirrors", async () => {
    const acct = await createAccount(baseUrl);
    const created = await acct.api.post('/api_keys', { name: 'refunds only', permissions: ['refunds:read'] });
    expect(created.status, created.text).toBe(201);
    const payment = await createExpressPayment(acct);
    const res = await run(transport, { key: created.body.secret }, 'query($id: ID!) { paymentIntent(id: $id) { id } }', { id: payment.id });
    expect(res.codes).toEqual(['permission_denied']);
    expect(res.data?.paymentIntent ?? null).toBeNull();
  });

  it('each mutation field counts as one request against the key', async () => {
    const acct = await createAccount(baseUrl);
    const variables = keysFor(3);
    const persistedQuery = { version: 1, sha256Hash: sha256(CREATE(3)) };
    // APQ: registered (and run) first, then measured when the hash comes alone.
    if (transport === 'APQ') expect((await http('POST', { key: acct.sk }, { query: CREATE(3), variables, extensions: { persistedQuery } })).codes).toEqual([]);
    const before = await keyRemaining(acct);
    const res =
      transport === 'APQ'
        ? await http('POST', { key: acct.sk }, { variables, extensions: { persistedQuery } })
        : await run(transport, { key: acct.sk }, CREATE(3), variables);
    const after = await keyRemaining(acct);
    if (transport === 'GET') {
      // A mutation never runs over GET (a link must not change state): refused, counted as one request.
      expect(res.status).toBe(400);
      expect(res.codes).toEqual(['invalid_request']);
      expect(before - after - 1).toBe(1);
      return;
    }
    expect(res.codes).toEqual([]);
    expect(Object.keys(res.data)).toHaveLength(3);
    expect(before - after - 1).toBe(3);
  });

  it('at most 10 mutation fields per operation: 11 is invalid_request and creates nothing', async () => {
    const acct = await createAccount(baseUrl);
    const res = await run(transport, { key: acct.sk }, CREATE(11), keysFor(11));
    expect(res.codes).toEqual(['invalid_request']);
    if (transport !== 'WS') expect(res.status).toBe(400);
    if (transport !== 'GET') expect(res.messages[0]).toMatch(/at most 10/);
    expect(await paymentCount(acct)).toBe(0);
  });

  it('public calls count in their per-IP bucket, each alias once', async () => {
    const acct = await createAccount(baseUrl);
    const query = 'mutation { a: createSandboxAccount(input: { name: "one" }) { id } b: createSandboxAccount(input: { name: "two" }) { id } }';
    const probe = async () => {
      const res = await http('POST', null, { query: 'mutation { createSandboxAccount(input: { name: "probe" }) { id } }' });
      expect(res.status).toBe(200);
      return Number(res.headers!.get('x-ratelimit-remaining'));
    };
    const persistedQuery = { version: 1, sha256Hash: sha256(query) };
    if (transport === 'APQ') {
      // Keyless callers store no persisted query: the hash alone is unknown, and the text goes with it.
      const alone = await http('POST', null, { query, extensions: { persistedQuery } }).then(() => http('POST', null, { extensions: { persistedQuery } }));
      expect(alone.status).toBe(400);
      expect(alone.messages[0]).toMatch(/^PersistedQueryNotFound/);
    }
    const before = await probe();
    const res =
      transport === 'APQ'
        ? await http('POST', null, { query, extensions: { persistedQuery } })
        : await run(transport, transport === 'WS' ? { key: acct.sk } : null, query);
    const after = await probe();
    if (transport === 'GET') {
      // Without a key, a request that cannot run as public calls is a request without a key; it named
      // createSandboxAccount, so it was counted once in that bucket before it was parsed.
      expect(res.status).toBe(401);
      expect(before - after - 1).toBe(1);
      return;
    }
    expect(res.codes).toEqual([]);
    expect(res.data.a.id).toMatch(/^acct_/);
    expect(before - after - 1).toBe(2);
  });

  it('a document nested thousands deep is "nested too deeply", never the engine\'s stack overflow', async () => {
    const acct = await createAccount(baseUrl);
    // GET carries it in the URL: 1,000 levels fit a request line, 10,000 do not.
    const depth = transport === 'GET' ? 1_000 : 10_000;
    const query = `{ account ${'{ a '.repeat(depth)}${'}'.repeat(depth)} }`;
    const res = await run(transport, { key: acct.sk }, query, undefined);
    expect(res.codes).toEqual(['invalid_request']);
    if (transport !== 'WS') expect(res.status).toBe(400);
    const said = res.messages.join(' ');
    expect(said).not.toMatch(/call stack|RangeError|Maximum/i);
    // APQ: the text is refused as it is registered.
    expect(said).toMatch(/nested too deeply/);
  });
});

describe('persisted queries', () => {
  it('are kept per account: a hash another account registered is unknown here', async () => {
    const a = await createAccount(baseUrl);
    const b = await createAccount(baseUrl);
    const query = `{ account { id name } } # ${idempotencyKey()}`;
    const persistedQuery = { version: 1, sha256Hash: sha256(query) };
    expect((await http('POST', { key: a.sk }, { query, extensions: { persistedQuery } })).codes).toEqual([]);
    const again = await http('POST', { key: a.sk }, { extensions: { persistedQuery } });
    expect(again.data.account.id).toBe(a.id);
    for (const method of ['POST', 'GET'] as const) {
      const probe = await http(method, { key: b.sk }, { extensions: { persistedQuery } });
      expect(probe.status).toBe(400);
      expect(probe.codes).toEqual(['invalid_request']);
      expect(probe.messages[0]).toMatch(/^PersistedQueryNotFound/);
    }
  });

  it('resolve over WebSocket too: the hash alone (query "") runs the account\'s stored text', async () => {
    const acct = await createAccount(baseUrl);
    const query = `{ account { id } } # ${idempotencyKey()}`;
    const persistedQuery = { version: 1, sha256Hash: sha256(query) };
    const unknown = await overWebSocket({ key: acct.sk }, { query: '', extensions: { persistedQuery } });
    expect(unknown.codes).toEqual(['invalid_request']);
    expect(unknown.messages[0]).toMatch(/^PersistedQueryNotFound/);
    expect((await http('POST', { key: acct.sk }, { query, extensions: { persistedQuery } })).codes).toEqual([]);
    const known = await overWebSocket({ key: acct.sk }, { query: '', extensions: { persistedQuery } });
    expect(known.codes).toEqual([]);
    expect(known.data.account.id).toBe(acct.id);
  });

  it('a hash that is not the SHA-256 of its text is invalid_request, not internal_error', async () => {
    const acct = await createAccount(baseUrl);
    const res = await http('POST', { key: acct.sk }, { query: '{ account { id } }', extensions: { persistedQuery: { version: 1, sha256Hash: sha256('{ __typename }') } } });
    expect(res.status).toBe(400);
    expect(res.codes).toEqual(['invalid_request']);
    expect(res.messages[0]).toMatch(/not the SHA-256/);
    const version = await http('POST', { key: acct.sk }, { query: '{ account { id } }', extensions: { persistedQuery: { version: 2, sha256Hash: 'x' } } });
    expect(version.status).toBe(400);
    expect(version.codes).toEqual(['invalid_request']);
  });
});

describe('probes', () => {
  it('a client token cannot run createSandboxAccount ×15 through a hash a key registered', async () => {
    const acct = await createAccount(baseUrl);
    const payment = await createExpressPayment(acct);
    const { token } = await mintToken(acct, payment.id);
    const query = `mutation { ${Array.from({ length: 10 }, (_, i) => `a${i}: createSandboxAccount(input: { name: "x${i}" }) { id sk }`).join(' ')} }`;
    const persistedQuery = { version: 1, sha256Hash: sha256(query) };
    expect((await http('POST', { key: acct.sk }, { query, extensions: { persistedQuery } })).codes).toEqual([]);
    // The key's persisted queries are not the token's (src/graphql/persistedQueries.ts).
    const res = await http('POST', { token }, { extensions: { persistedQuery } });
    expect(res.status).toBe(400);
    expect(res.messages[0]).toMatch(/^PersistedQueryNotFound/);
    expect(res.data).toBeUndefined();
    const sent = await http('POST', { token }, { query, extensions: { persistedQuery } });
    expect(sent.status).toBe(403);
    expect(sent.codes).toEqual(['permission_denied']);
    const fifteen = `mutation { ${Array.from({ length: 15 }, (_, i) => `a${i}: createSandboxAccount(input: { name: "x${i}" }) { id }`).join(' ')} }`;
    const over = await http('POST', { token }, { query: fifteen });
    expect(over.status).toBe(400);
    expect(over.codes).toEqual(['invalid_request']);
  });

  it("another account's intent, read ahead beside a known key's count, is not found, nothing of it answered", async () => {
    const owner = await createAccount(baseUrl);
    const other = await createAccount(baseUrl);
    const payment = await createExpressPayment(owner);
    const query = 'query($id: ID!) { paymentIntent(id: $id) { id amount refunds { id } events { id } } }';
    // The first request makes the key known to this process; the read ahead goes with the next ones.
    for (let i = 0; i < 3; i++) {
      const res = await http('POST', { key: other.sk }, { query, variables: { id: payment.id } });
      expect(res.codes).toEqual(['resource_not_found']);
      expect(res.data.paymentIntent).toBeNull();
    }
    const own = await http('POST', { key: owner.sk }, { query, variables: { id: payment.id } });
    expect(own.data.paymentIntent).toMatchObject({ id: payment.id, amount: payment.amount });
  });

  it('150 and 400 aliased createPaymentIntent in one request: refused whole, no payment made', async () => {
    const acct = await createAccount(baseUrl);
    // One idempotency key for all (the body stays under its 64 KiB limit): nothing runs either way.
    const creations = (n: number) => `mutation($k: String!) { ${Array.from({ length: n }, (_, i) => `c${i}: createPaymentIntent(input: { amount: 1000, currency: "AOA", paymentMethod: MULTICAIXA_REFERENCE }, idempotencyKey: $k) { id }`).join(' ')} }`;
    // 150 (~3,800 tokens) is parsed and refused by the mutation-field limit; 400 (~10,000) where parsing passes the token limit.
    for (const [n, message] of [[150, /150 mutation fields/], [400, /^Syntax Error: Document contains more th\w+ 5000 tokens/]] as const) {
      const res = await http('POST', { key: acct.sk }, { query: creations(n), variables: { k: idempotencyKey() } });
      expect(res.status).toBe(400);
      expect(res.codes).toEqual(['invalid_request']);
      expect(res.messages[0]).toMatch(message);
    }
    expect(await paymentCount(acct)).toBe(0);
  });

  it('50 aliased sendTestWebhook in one request: refused whole, nothing sent', async () => {
    const acct = await createAccount(baseUrl);
    const endpoint = await acct.api.post('/webhook_endpoints', { url: `${receiver.url}/probe-${acct.id}` });
    expect(endpoint.status, endpoint.text).toBe(201);
    const query = `mutation { ${Array.from({ length: 50 }, (_, i) => `t${i}: sendTestWebhook(id: "${endpoint.body.id}") { eventId }`).join(' ')} }`;
    const res = await http('POST', { key: acct.sk }, { query });
    expect(res.status).toBe(400);
    expect(res.codes).toEqual(['invalid_request']);
    // The marker: one test webhook afterwards. A test ping is sent only from its stored test.ping event,
    // stored before its mutation answers, so any of the 50 that had run would have stored its event
    // before the refusal came back, ahead of the marker's in the account's events. The marker's arrival
    // shows that pings reach this receiver; the events then show that nothing came before it.
    const one = await http('POST', { key: acct.sk }, { query: `mutation { sendTestWebhook(id: "${endpoint.body.id}") { eventId } }` });
    expect(one.codes, one.messages.join()).toEqual([]);
    const marker: string = one.data.sendTestWebhook.eventId;
    const [arrived] = await receiver.waitFor((r) => r.path.includes(`probe-${acct.id}`), 1);
    expect(arrived!.headers['service-event-id']).toBe(marker);
    const pings = await acct.api.get('/events?type=test.ping&limit=100');
    expect(pings.status, pings.text).toBe(200);
    expect(pings.body.data.map((e: { id: string }) => e.id)).toEqual([marker]);
    expect(receiver.received.filter((r) => r.path.includes(`probe-${acct.id}`)).map((r) => r.headers['service-event-id'])).toEqual([marker]);
  });
});
