// Trusted documents (issue 56): an account registers its frontends' operations from the manifests that
// Apollo's and graphql-codegen's tools write, and holds each kind of credential to `off`, `audit` or
// `enforce`. Proven over REST, GraphQL and graphql-ws, with Apollo Client's persisted-query link fed a
// manifest that Apollo's own generator wrote.
import { createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { ApolloClient, CombinedGraphQLErrors, HttpLink, InMemoryCache, gql as apolloGql } from '@apollo/client';
import { PersistedQueryLink } from '@apollo/client/link/persisted-queries';
import { generatePersistedQueryManifest } from '@apollo/generate-persisted-query-manifest';
import { generatePersistedQueryIdsFromManifest } from '@apollo/persisted-query-lists';
import { beforeAll, describe, expect, it } from 'vitest';
import { createAccount, type TestAccount } from '../support/accounts';
import { sharedGateway, type TestServer } from '../support/server';
import { createExpressPayment, expectErrorEnvelope, mintToken } from '../clientTokens/support';
import { gql, wsClient } from './support';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const STATUS = 'query Status($id: ID!) { paymentIntent(id: $id) { id status } }';
const AMOUNT = 'query Amount($id: ID!) { paymentIntent(id: $id) { id amount } }';

let server: TestServer;
let acct: TestAccount;
let payment: { id: string };

/** `pgw_graphql_untrusted_documents_total` of one credential kind and mode, from the gateway's /metrics. */
async function untrusted(credential: string, mode: string): Promise<number> {
  const text = await (await fetch(`${server.baseUrl}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`pgw_graphql_untrusted_documents_total{credential="${credential}",mode="${mode}"}`));
  return line ? Number(line.split(' ').pop()) : 0;
}

async function post(bearer: string, body: Record<string, unknown>): Promise<{ status: number; body: any }> {
  const res = await fetch(`${server.baseUrl}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${bearer}` },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

beforeAll(async () => {
  server = await sharedGateway();
  acct = await createAccount(server.baseUrl, 'trusted documents');
  payment = await createExpressPayment(acct);
});

describe('registering a manifest (POST /v1/graphql/documents)', () => {
  it('takes the client preset map and an Apollo manifest, and answers the documents as stored', async () => {
    const preset = await acct.api.post('/graphql/documents', { [sha256(STATUS)]: STATUS, [`sha256:${sha256(AMOUNT)}`]: AMOUNT });
    expect(preset.status, preset.text).toBe(200);
    expect(preset.body.data.map((d: any) => [d.id, d.name, d.type])).toEqual([
      [`sha256:${sha256(STATUS)}`, 'Status', 'query'],
      [`sha256:${sha256(AMOUNT)}`, 'Amount', 'query'],
    ]);
    // Again, in Apollo's format: the same documents, first registration time kept.
    const apollo = await acct.api.post('/graphql/documents', {
      format: 'apollo-persisted-query-manifest',
      version: 1,
      operations: [{ id: sha256(STATUS), name: 'Status', type: 'query', body: STATUS }],
    });
    expect(apollo.status, apollo.text).toBe(200);
    expect(apollo.body.data).toEqual([preset.body.data[0]]);
  });

  it('refuses a manifest with one bad document whole, and stores none of it', async () => {
    const fresh = 'query Fresh { account { id } }';
    const before = await acct.api.get('/graphql/documents?limit=100');
    for (const manifest of [
      { [sha256(fresh)]: fresh, [sha256('something else')]: 'query Other { account { id } }' },
      { [sha256(fresh)]: fresh, [sha256('not graphql {')]: 'not graphql {' },
      { [sha256(fresh)]: fresh, [sha256('query A { account { id } } query B { account { id } }')]: 'query A { account { id } } query B { account { id } }' },
      { format: 'apollo-persisted-query-manifest', version: 1, operations: [{ id: sha256(fresh), type: 'mutation', body: fresh }] },
      { 'not-a-hash': fresh },
      {},
    ]) {
      expectErrorEnvelope(await acct.api.post('/graphql/documents', manifest), 400, 'invalid_request');
    }
    const after = await acct.api.get('/graphql/documents?limit=100');
    expect(after.body.data).toEqual(before.body.data);
  });

  it('is for the full secret key only', async () => {
    const restricted = await acct.api.post('/api_keys', { name: 'ro', permissions: ['payment_intents:read'] });
    const res = await fetch(`${server.baseUrl}/v1/graphql/documents`, { headers: { authorization: `Bearer ${restricted.body.secret}` } });
    expect(res.status).toBe(403);
    expect((await res.json()).error.code).toBe('permission_denied');
  });

  it('pages the list newest first, and deletes one document (404 after)', async () => {
    const extra = Array.from({ length: 3 }, (_, i) => `query Page${i} { account { id } }`);
    expect((await acct.api.post('/graphql/documents', Object.fromEntries(extra.map((t) => [sha256(t), t])))).status).toBe(200);
    const first = await acct.api.get('/graphql/documents?limit=2');
    expect(first.body.has_more).toBe(true);
    const second = await acct.api.get(`/graphql/documents?limit=100&starting_after=${encodeURIComponent(first.body.data[1].id)}`);
    const all = [...first.body.data, ...second.body.data].map((d: any) => d.id);
    expect(new Set(all).size).toBe(all.length);
    expect(all).toEqual(expect.arrayContaining(extra.map((t) => `sha256:${sha256(t)}`)));
    const id = `sha256:${sha256(extra[0]!)}`;
    const deleted = await acct.api.delete(`/graphql/documents/${encodeURIComponent(id)}`);
    expect(deleted.body).toEqual({ id, object: 'graphql_document', deleted: true });
    expectErrorEnvelope(await acct.api.delete(`/graphql/documents/${encodeURIComponent(id)}`), 404, 'resource_not_found');
    expectErrorEnvelope(await acct.api.get('/graphql/documents?starting_after=sha256%3A' + '0'.repeat(64)), 400, 'invalid_request');
  });
});

describe('modes (GET/PUT /v1/graphql/settings)', () => {
  it('defaults to off for keys and audit for client tokens; a PUT changes only the kinds it names', async () => {
    const other = await createAccount(server.baseUrl, 'settings');
    const read = await other.api.get('/graphql/settings');
    expect(read.body).toEqual({ object: 'graphql_settings', trusted_documents: { secret_key: 'off', restricted_key: 'off', client_token: 'audit', dashboard: 'off' } });
    const put = await other.api.put('/graphql/settings', { trusted_documents: { restricted_key: 'enforce' } });
    expect(put.body.trusted_documents).toEqual({ secret_key: 'off', restricted_key: 'enforce', client_token: 'audit', dashboard: 'off' });
    expectErrorEnvelope(await other.api.put('/graphql/settings', { trusted_documents: { client_token: 'strict' } }), 400, 'invalid_request');
    expectErrorEnvelope(await other.api.put('/graphql/settings', { trusted_documents: { partner: 'off' } }), 400, 'invalid_request');
    expect((await other.api.get('/graphql/settings')).body).toEqual(put.body);
  });

  it('audit (client tokens by default) runs an untrusted document, and counts it', async () => {
    const { token } = await mintToken(acct, payment.id);
    const before = await untrusted('client_token', 'audit');
    const res = await post(token, { query: 'query Untrusted($id: ID!) { paymentIntent(id: $id) { status } }', variables: { id: payment.id } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data.paymentIntent.status).toBeTypeOf('string');
    expect(await untrusted('client_token', 'audit')).toBe(before + 1);
    // A trusted one is not counted.
    expect((await post(token, { query: STATUS, variables: { id: payment.id } })).status).toBe(200);
    expect(await untrusted('client_token', 'audit')).toBe(before + 1);
  });

  it('enforce holds client tokens to trusted documents while the secret key runs anything', async () => {
    const held = await createAccount(server.baseUrl, 'enforced');
    const own = await createExpressPayment(held);
    expect((await held.api.post('/graphql/documents', { [sha256(STATUS)]: STATUS })).status).toBe(200);
    expect((await held.api.put('/graphql/settings', { trusted_documents: { client_token: 'enforce' } })).status).toBe(200);
    const { token } = await mintToken(held, own.id);

    const byText = await post(token, { query: STATUS, variables: { id: own.id } });
    expect(byText.body.data.paymentIntent).toEqual({ id: own.id, status: expect.any(String) });
    const byId = await post(token, { documentId: `sha256:${sha256(STATUS)}`, variables: { id: own.id } });
    expect(byId.body.data.paymentIntent.id).toBe(own.id);
    const byApolloHash = await post(token, { extensions: { persistedQuery: { version: 1, sha256Hash: sha256(STATUS) } }, variables: { id: own.id } });
    expect(byApolloHash.body.data.paymentIntent.id).toBe(own.id);

    const before = await untrusted('client_token', 'enforce');
    for (const body of [
      { query: AMOUNT, variables: { id: own.id } },
      { query: STATUS + ' ', variables: { id: own.id } },
      { documentId: `sha256:${sha256(AMOUNT)}`, variables: { id: own.id } },
      { extensions: { persistedQuery: { version: 1, sha256Hash: sha256(AMOUNT) } }, variables: { id: own.id } },
    ]) {
      const refused = await post(token, body);
      expect(refused.status, JSON.stringify(refused.body)).toBe(400);
      expect(refused.body.errors[0].extensions.code).toBe('invalid_request');
      expect(refused.body.errors[0].message).toContain('document not registered');
    }
    expect(await untrusted('client_token', 'enforce')).toBe(before + 3);
    // Another account's trusted document is not this one's.
    expect((await post(token, { documentId: `sha256:${sha256(AMOUNT)}`, variables: { id: own.id } })).status).toBe(400);
    // The secret key stays off.
    const secret = await post(held.sk, { query: AMOUNT, variables: { id: own.id } });
    expect(secret.body.data.paymentIntent.amount).toBe(15_000);
    // Deleted: refused at once on this process.
    await held.api.delete(`/graphql/documents/${encodeURIComponent(`sha256:${sha256(STATUS)}`)}`);
    expect((await post(token, { query: STATUS, variables: { id: own.id } })).status).toBe(400);
  });

  it('enforce holds graphql-ws operations too', async () => {
    const held = await createAccount(server.baseUrl, 'enforced ws');
    expect((await held.api.put('/graphql/settings', { trusted_documents: { secret_key: 'enforce' } })).status).toBe(200);
    expect((await held.api.post('/graphql/documents', { [sha256('query Me { account { id } }')]: 'query Me { account { id } }' })).status).toBe(200);
    const client = wsClient(server.baseUrl, held.sk);
    const run = (query: string) =>
      new Promise<any>((resolve) => {
        let result: any;
        client.subscribe({ query }, { next: (r) => (result = r), error: (e) => resolve({ errors: e }), complete: () => resolve(result) });
      });
    try {
      expect((await run('query Me { account { id } }')).data.account.id).toBe(held.id);
      const refused = await run('query NotMe { account { name } }');
      expect(JSON.stringify(refused.errors)).toContain('document not registered');
    } finally {
      await client.dispose();
    }
  });

  it('runs a trusted document by documentId over GET and over graphql-ws too', async () => {
    const held = await createAccount(server.baseUrl, 'by id');
    const me = 'query Me { account { id } }';
    expect((await held.api.post('/graphql/documents', { [sha256(me)]: me })).status).toBe(200);
    expect((await held.api.put('/graphql/settings', { trusted_documents: { secret_key: 'enforce' } })).status).toBe(200);
    const get = await fetch(`${server.baseUrl}/graphql?documentId=${encodeURIComponent(`sha256:${sha256(me)}`)}`, { headers: { authorization: `Bearer ${held.sk}` } });
    expect(get.status).toBe(200);
    expect((await get.json()).data.account.id).toBe(held.id);
    // graphql-ws's own protocol wants a string 'query': an empty one, as for APQ, and the id beside it.
    const client = wsClient(server.baseUrl, held.sk);
    try {
      const result = await new Promise<any>((resolve) => {
        let last: any;
        client.subscribe({ query: '', documentId: `sha256:${sha256(me)}` } as never, { next: (r) => (last = r), error: (e) => resolve({ errors: e }), complete: () => resolve(last) });
      });
      expect(result.data?.account?.id, JSON.stringify(result)).toBe(held.id);
    } finally {
      await client.dispose();
    }
  });

  it('a keyless request cannot name a document', async () => {
    const res = await fetch(`${server.baseUrl}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ documentId: `sha256:${sha256(STATUS)}` }) });
    expect(res.status).toBe(401);
  });

  it('a malformed documentId is 400 with its reason', async () => {
    for (const documentId of ['md5:abc', sha256(STATUS), 'sha256:xyz', 42]) {
      const res = await post(acct.sk, { documentId });
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(res.body.errors[0].extensions.code).toBe('invalid_request');
    }
  });
});

describe('GraphQL: registerDocuments, trustedDocuments, graphqlSettings', () => {
  it('serves the same documents and settings as REST', async () => {
    const own = await createAccount(server.baseUrl, 'graphql documents');
    const text = 'query Mine { account { id } }';
    const registered = await gql(server.baseUrl, own.sk, 'mutation($d: [TrustedDocumentInput!]!) { registerDocuments(documents: $d) { id name type } }', {
      d: [{ id: sha256(text), body: text }],
    });
    expect(registered.body.data.registerDocuments).toEqual([{ id: `sha256:${sha256(text)}`, name: 'Mine', type: 'QUERY' }]);
    const listed = await gql(server.baseUrl, own.sk, '{ trustedDocuments(first: 5) { nodes { id } pageInfo { hasNextPage } } graphqlSettings { trustedDocuments { clientToken } } }');
    expect(listed.body.data).toEqual({
      trustedDocuments: { nodes: [{ id: `sha256:${sha256(text)}` }], pageInfo: { hasNextPage: false } },
      graphqlSettings: { trustedDocuments: { clientToken: 'AUDIT' } },
    });
    const updated = await gql(server.baseUrl, own.sk, 'mutation { updateGraphqlSettings(trustedDocuments: { clientToken: ENFORCE }) { trustedDocuments { secretKey clientToken } } }');
    expect(updated.body.data.updateGraphqlSettings.trustedDocuments).toEqual({ secretKey: 'OFF', clientToken: 'ENFORCE' });
    expect((await own.api.get('/graphql/settings')).body.trusted_documents.client_token).toBe('enforce');
    const bad = await gql(server.baseUrl, own.sk, 'mutation($d: [TrustedDocumentInput!]!) { registerDocuments(documents: $d) { id } }', { d: [{ id: sha256('x'), body: text }] });
    expect(bad.body.errors?.[0]?.extensions?.code).toBe('invalid_request');
  });
});

describe("Apollo Client's persisted-query link, with a manifest from Apollo's generator, in enforce", () => {
  it('runs the registered operation by its id alone, and refuses it once the gateway no longer trusts it', async () => {
    const app = await createAccount(server.baseUrl, 'apollo app');
    const own = await createExpressPayment(app);
    const documents = fileURLToPath(new URL('./fixtures/trusted/*.graphql', import.meta.url));
    const manifest = await generatePersistedQueryManifest({ documents }, undefined);
    expect(manifest.operations.map((o) => o.name)).toEqual(['PaymentStatus']);
    expect((await app.api.post('/graphql/documents', manifest)).status).toBe(200);
    expect((await app.api.put('/graphql/settings', { trusted_documents: { client_token: 'enforce' } })).status).toBe(200);
    const { token } = await mintToken(app, own.id);

    const sent: any[] = [];
    const client = new ApolloClient({
      cache: new InMemoryCache(),
      link: new PersistedQueryLink(generatePersistedQueryIdsFromManifest({ loadManifest: () => manifest })).concat(
        new HttpLink({
          uri: `${server.baseUrl}/graphql`,
          headers: { authorization: `Bearer ${token}` },
          fetch: async (url, init) => {
            sent.push(JSON.parse(String(init?.body)));
            return fetch(url, init);
          },
        }),
      ),
    });
    const result = await client.query({
      query: apolloGql`query PaymentStatus($id: ID!) { paymentIntent(id: $id) { id status amount } }`,
      variables: { id: own.id },
    });
    expect(result.data).toMatchObject({ paymentIntent: { id: own.id, amount: 15_000 } });
    // What went over the wire: the id of the manifest's document, no text.
    expect(sent[0].query).toBeUndefined();
    expect(sent[0].extensions.persistedQuery.sha256Hash).toBe(manifest.operations[0]!.id);

    // Taken off the gateway's list (the app still ships it): refused by the gateway, not the link.
    expect((await app.api.delete(`/graphql/documents/sha256%3A${manifest.operations[0]!.id}`)).status).toBe(200);
    const refused = await client
      .query({ query: apolloGql`query PaymentStatus($id: ID!) { paymentIntent(id: $id) { id status amount } }`, variables: { id: own.id }, fetchPolicy: 'network-only' })
      .then((r) => `ran: ${JSON.stringify(r)}`, (err: unknown) => (CombinedGraphQLErrors.is(err) ? `${err.errors[0]?.extensions?.code} ${err.message}` : String(err)));
    expect(sent).toHaveLength(2);
    expect(refused).toMatch(/^invalid_request /);
    expect(refused).toContain('document not registered');
  });
});
