import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { subscribeWithout } from '../../bench/lib/keylessFlood';
import { KEYLESS_MAX_BODY_BYTES, KEYLESS_MAX_TOKENS } from '../../src/graphql/parseQuery';
import { documentCacheStats } from '../../src/graphql/documentCache';
import { createAccount, type TestAccount } from '../support/accounts';
import { type TestServer } from '../support/server';
import { gql, startGraphqlTestServer } from './support';

/**
 * The parsed-document cache (src/graphql/documentCache.ts) is filled only for authenticated, counted
 * callers, and is bounded in bytes in all and per document. The gateway runs in this process, so the
 * cache's own stats are read between requests.
 */
let server: TestServer;
let baseUrl: string;
let acct: TestAccount;

beforeAll(async () => {
  server = await startGraphqlTestServer({ RATE_LIMIT_PER_MINUTE: '100000', RATE_LIMIT_PER_ACCOUNT_PER_MINUTE: '100000' });
  baseUrl = server.baseUrl;
  acct = await createAccount(baseUrl);
});
afterAll(async () => {
  await server?.stop();
});

let distinct = 0;
/** A different document each call, of about `bytes` characters and some 3 tokens per 12 characters. */
function largeDocument(bytes: number, extra = ''): string {
  const n = ++distinct;
  const fields: string[] = [];
  for (let length = 0; length < bytes; ) {
    const field = `d${n}_${fields.length}: __typename`;
    fields.push(field);
    length += field.length + 1;
  }
  return `{ ${extra} ${fields.join(' ')} }`;
}

async function post(authorization: string | null, body: unknown): Promise<Response> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (authorization) headers.authorization = authorization;
  return fetch(`${baseUrl}/graphql`, { method: 'POST', headers, body: JSON.stringify(body) });
}

describe('the document cache before authentication', () => {
  it('keyless and bad-key requests with distinct 60 KB documents are 401 and leave the cache as it was', async () => {
    const before = documentCacheStats();
    for (let i = 0; i < 10; i++) {
      for (const authorization of [null, 'Bearer sk_test_notakeynotakeynotakey', 'Bearer garbage']) {
        const res = await post(authorization, { query: largeDocument(60_000) });
        expect(res.status).toBe(401);
        expect(((await res.json()) as { errors: Array<{ extensions: { code: string } }> }).errors[0]!.extensions.code).toBe('authentication_failed');
      }
      // One that names the public field: counted per IP first, then parsed, but not kept.
      const naming = await post(null, { query: largeDocument(60_000, 'createSandboxAccount') });
      expect(naming.status).toBe(401);
      const overGet = await fetch(`${baseUrl}/graphql?query=${encodeURIComponent(largeDocument(4_000))}`);
      expect(overGet.status).toBe(401);
    }
    for (const params of [{}, { authorization: 'Bearer sk_test_notakeynotakeynotakey' }]) {
      expect(await subscribeWithout(baseUrl, params, largeDocument(60_000))).toBe(4401);
    }
    expect(documentCacheStats()).toEqual(before);
  });

  it('a keyless public call runs, and its document is not kept', async () => {
    const before = documentCacheStats();
    const res = await gql(baseUrl, null, `mutation { createSandboxAccount(input: { name: "kept? ${++distinct}" }) { id } }`);
    expect(res.status).toBe(200);
    expect(res.body.data.createSandboxAccount.id).toMatch(/^acct_/);
    // Parsing stops at KEYLESS_MAX_TOKENS: a longer keyless document is a request without a key.
    const padded = `mutation { createSandboxAccount(input: { name: "long" }) { id ${'__typename '.repeat(KEYLESS_MAX_TOKENS)}} }`;
    expect((await gql(baseUrl, null, padded)).status).toBe(401);
    expect(documentCacheStats()).toEqual(before);
  });

  it('reads at most KEYLESS_MAX_BODY_BYTES of a keyless body: a few tokens with a long variable run under it, and are 401 over it', async () => {
    // A variable the operation does not declare is read with the body and then ignored: only its length counts here.
    const call = () => `mutation { createSandboxAccount(input: { name: "body bound ${++distinct}" }) { id } }`;
    const ran = await gql(baseUrl, null, call(), { pad: 'u'.repeat(KEYLESS_MAX_BODY_BYTES - 300) });
    expect(ran.status).toBe(200);
    expect(ran.body.data.createSandboxAccount.id).toMatch(/^acct_/);
    // The same call with a body past the bound: refused as a request without a key, before it is read.
    const over = 'o'.repeat(KEYLESS_MAX_BODY_BYTES);
    const refused = await gql(baseUrl, null, call(), { pad: over });
    expect(refused.status).toBe(401);
    expect(refused.body.errors?.[0]?.extensions?.code).toBe('authentication_failed');
    // With a key, the body may be as large as MAX_BODY_BYTES.
    const withKey = await gql(baseUrl, acct.sk, '{ account { id } }', { pad: over });
    expect(withKey.status).toBe(200);
    expect(withKey.body.data.account.id).toBe(acct.id);
  });
});

describe('the document cache for authenticated callers', () => {
  it('keeps a document sent with a key, once', async () => {
    const before = documentCacheStats();
    const query = largeDocument(2_000);
    for (let i = 0; i < 3; i++) expect((await gql(baseUrl, acct.sk, query)).status).toBe(200);
    const after = documentCacheStats();
    expect(after.entries).toBe(before.entries + 1);
    expect(after.bytes).toBeGreaterThan(before.bytes);
  });

  it('holds its byte bound when a key sends many distinct large documents', async () => {
    const { maxBytes, maxDocumentBytes } = documentCacheStats();
    // Some 2,000 tokens each: just under the per-document bound, so that each is kept.
    const size = 7_800;
    let sent = 0;
    for (let total = 0; total < 1.5 * maxBytes; total += maxDocumentBytes / 1.2) {
      const res = await gql(baseUrl, acct.sk, largeDocument(size));
      expect(res.status).toBe(200);
      sent++;
      const stats = documentCacheStats();
      expect(stats.bytes).toBeLessThanOrEqual(maxBytes);
    }
    const stats = documentCacheStats();
    expect(stats.entries).toBeLessThan(sent);
    // Full, not emptied: the bound evicts the oldest, one at a time.
    expect(stats.bytes).toBeGreaterThan(maxBytes - 2 * maxDocumentBytes);
  });

  it('parses a document over the per-document bound for its request, and does not keep it', async () => {
    const before = documentCacheStats();
    const res = await gql(baseUrl, acct.sk, largeDocument(30_000));
    expect(res.status).toBe(200);
    expect(documentCacheStats().entries).toBe(before.entries);
  });
});
