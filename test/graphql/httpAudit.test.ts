// GraphQL over HTTP conformance: graphql-http's own server audits (the reference implementation's
// checklist of the GraphQL-over-HTTP specification) against the real gateway, with a secret key.
import { auditServer } from 'graphql-http';
import { beforeAll, expect, it } from 'vitest';
import { createAccount, type TestAccount } from '../support/accounts';
import { sharedGateway, type TestServer } from '../support/server';

let server: TestServer;
let acct: TestAccount;

beforeAll(async () => {
  server = await sharedGateway();
  acct = await createAccount(server.baseUrl, 'graphql-http audit');
});

it("passes graphql-http's server audits with no error", async () => {
  const results = await auditServer({
    url: `${server.baseUrl}/graphql`,
    fetchFn: (input: RequestInfo | URL, init?: RequestInit) => {
      const headers = new Headers(init?.headers);
      headers.set('authorization', `Bearer ${acct.sk}`);
      return fetch(input, { ...init, headers });
    },
  });
  const by = (status: string) => results.filter((r) => r.status === status).map((r) => `${r.id} ${r.name}${'reason' in r ? `: ${r.reason}` : ''}`);
  console.log(`graphql-http audit: ${by('ok').length} ok, ${by('warn').length} warnings, ${by('error').length} errors\n${[...by('warn'), ...by('error')].join('\n')}`);
  expect(by('error')).toEqual([]);
  expect(by('ok').length).toBeGreaterThan(50);
});
