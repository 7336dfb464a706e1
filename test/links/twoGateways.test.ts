import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../support/accounts';
import { startTestServer, type TestServer } from '../support/server';
import { createLink, createSession } from './support/gateway';

/**
 * Each gateway builds its URLs from its own PUBLIC_BASE_URL, also with another gateway in the same
 * process (src/server.ts passes each its settings; no process-wide setting that the last one started
 * would overwrite). Both are started before either is asked anything. Mongoose has one connection per
 * process, so the second gateway uses the first one's database (as a second process would, through
 * MONGODB_URI).
 */
const BASES = ['https://one.pay.example.test', 'https://two.pay.example.test'] as const;
const gateways: TestServer[] = [];
beforeAll(async () => {
  const first = await startTestServer({ PUBLIC_BASE_URL: BASES[0] });
  gateways.push(first);
  gateways.push(await startTestServer({ PUBLIC_BASE_URL: BASES[1], MONGODB_URI: first.gateway.db.uri }));
});
afterAll(async () => {
  for (const gw of gateways.splice(0).reverse()) await gw.stop();
});

async function graphqlLinkUrl(baseUrl: string, sk: string, id: string): Promise<string> {
  const res = await fetch(`${baseUrl}/graphql`, {
    method: 'POST',
    headers: { authorization: `Bearer ${sk}`, 'content-type': 'application/json' },
    body: JSON.stringify({ query: 'query($id: ID!) { paymentLink(id: $id) { url } }', variables: { id } }),
  });
  const body = (await res.json()) as { data?: { paymentLink?: { url: string } }; errors?: unknown };
  expect(body.errors, JSON.stringify(body.errors)).toBeUndefined();
  return body.data!.paymentLink!.url;
}

describe('two gateways in one process, different PUBLIC_BASE_URL', () => {
  it('each answers links and checkout sessions with its own public URL, over REST and GraphQL', async () => {
    // The first gateway is asked after the second started: a "last configured" value would answer it wrongly.
    for (const [i, gw] of gateways.entries()) {
      const base = BASES[i]!;
      const { sk, api } = await createAccount(gw.baseUrl);
      const link = await createLink(api, { amount: 1500, description: `gateway ${i + 1}` });
      expect(link.url).toBe(`${base}/pay/${link.code}`);

      const listed = await api.get('/payment_links');
      expect(listed.body.data.map((l: { url: string }) => l.url)).toEqual([`${base}/pay/${link.code}`]);
      const publicView = await api.get(`/public/payment_links/${link.code}`, { key: null });
      expect(publicView.status, publicView.text).toBe(200);
      expect(publicView.body.url).toBe(`${base}/pay/${link.code}`);
      expect(await graphqlLinkUrl(gw.baseUrl, sk, link.id)).toBe(`${base}/pay/${link.code}`);

      const session = await createSession(api, { amount: 2500 });
      expect(session.url).toBe(`${base}/checkout/${session.id}`);
    }
  });
});
