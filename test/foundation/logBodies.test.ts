import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../support/accounts';
import { createPayment, expressBody } from '../support/payments';
import { type TestServer } from '../support/server';
import { gql, gqlData } from '../graphql/support';
import { cookieData, signIn } from '../dashboard/sessionSupport';
import { sharedGateway } from '../support/server';

/** GET /logs shows each request's bodies, with secrets redacted, cut at 4 KiB (issue 40). */
let server: TestServer;
beforeAll(async () => {
  server = await sharedGateway();
});
afterAll(async () => server?.stop());

async function logOf(api: { get: (p: string) => Promise<any> }, requestId: string | null, query = ''): Promise<any> {
  const res = await api.get(`/logs?limit=100${query}`);
  expect(res.status).toBe(200);
  return res.body.data.find((l: any) => l.request_id === requestId);
}

describe('request and response bodies in GET /logs', () => {
  it('records both bodies as sent, with source api', async () => {
    const acct = await createAccount(server.baseUrl);
    const payment = await createPayment(acct.api, expressBody('923000000', 12_345, { merchant_reference: 'order-77' }));
    const list = await acct.api.get('/payment_intents?limit=1');
    const entries = (await acct.api.get('/logs?limit=100')).body.data;
    const created = entries.find((l: any) => l.path === '/v1/payment_intents' && l.method === 'POST');
    expect(created.source).toBe('api');
    expect(JSON.parse(created.request_body)).toMatchObject({ amount: 12_345, merchant_reference: 'order-77' });
    expect(JSON.parse(created.response_body)).toMatchObject({ id: payment.id, amount: 12_345 });

    const listed = await logOf(acct.api, list.headers.get('request-id'));
    expect(listed.request_body).toBeNull();
    expect(JSON.parse(listed.response_body).data[0].id).toBe(payment.id);

    // An error answer is recorded as sent, and a body that is not JSON as received.
    const broken = await acct.api.post('/webhook_endpoints', undefined, { rawBody: '{"url": ', headers: { 'content-type': 'application/json' } });
    expect(broken.status).toBe(400);
    const brokenLog = await logOf(acct.api, broken.headers.get('request-id'));
    expect(brokenLog.request_body).toBe('{"url": ');
    expect(JSON.parse(brokenLog.response_body).error.code).toBe('invalid_json');
  });

  it('never shows a webhook secret, a client token, a key, or a new account’s sk and pk', async () => {
    const acct = await createAccount(server.baseUrl);
    const endpoint = await acct.api.post('/webhook_endpoints', { url: 'http://127.0.0.1:9/hooks' });
    expect(endpoint.body.secret).toMatch(/^whsec_/);
    const rotated = await acct.api.post(`/webhook_endpoints/${endpoint.body.id}/rotate_secret`);
    const payment = await createPayment(acct.api, expressBody());
    const token = await acct.api.post('/client_tokens', { payment_intent: payment.id });
    expect(token.body.token).toMatch(/^ct_test_/);
    const restricted = await acct.api.post('/api_keys', { name: 'ci', permissions: ['logs:read'] });
    // GraphQL with a key: the new account's keys come back in the answer, and a secret in the variables.
    const made = await gqlData(server.baseUrl, acct.sk, 'mutation($n: String!) { createSandboxAccount(input: {name: $n}) { sk pk } }', { n: 'child' });
    // Refused (the variable is unused), yet logged with its body.
    expect((await gql(server.baseUrl, acct.sk, 'query($password: String) { account { id } }', { password: 'hunter2-is-my-password' })).status).toBe(400);

    const text = (await acct.api.get('/logs?limit=100')).text;
    const secrets = [endpoint.body.secret, rotated.body.secret, token.body.token, restricted.body.secret, made.createSandboxAccount.sk, made.createSandboxAccount.pk, acct.sk];
    for (const secret of secrets) {
      expect(secret.length).toBeGreaterThan(20);
      expect(text).not.toContain(secret);
      // Not even its random part.
      expect(text).not.toContain(secret.slice(-24));
    }
    expect(text).not.toContain('hunter2');
    expect(text).toContain('\\"password\\":\\"[REDACTED]\\"');
    // The rest of those answers is still there.
    const entries = JSON.parse(text).data;
    const created = entries.find((l: any) => l.request_id === endpoint.headers.get('request-id'));
    expect(JSON.parse(created.response_body)).toMatchObject({ id: endpoint.body.id, secret: '[REDACTED]' });
    const gqlEntry = entries.find((l: any) => l.path === '/graphql' && l.response_body.includes('createSandboxAccount'));
    expect(JSON.parse(gqlEntry.response_body)).toEqual({ data: { createSandboxAccount: { sk: '[REDACTED]', pk: '[REDACTED]' } } });
  });

  it('cuts a body at 4 KiB, ending in …', async () => {
    const acct = await createAccount(server.baseUrl);
    for (let i = 0; i < 30; i++) await createPayment(acct.api, expressBody('923000000', 100 + i, { metadata: { note: 'x'.repeat(200) } }));
    const list = await acct.api.get('/payment_intents?limit=30');
    expect(list.text.length).toBeGreaterThan(8192);
    const entry = await logOf(acct.api, list.headers.get('request-id'));
    expect(Buffer.byteLength(entry.response_body)).toBeLessThanOrEqual(4096);
    expect(Buffer.byteLength(entry.response_body)).toBeGreaterThan(4000);
    expect(entry.response_body.endsWith('…')).toBe(true);
    expect(list.text.startsWith(entry.response_body.slice(0, -1))).toBe(true);
  });

  it("hides the dashboard's own requests unless asked (REST include_dashboard, GraphQL includeDashboard)", async () => {
    const acct = await createAccount(server.baseUrl);
    const session = await signIn(server.baseUrl, acct.sk);
    expect(session.status).toBe(200);
    await cookieData(server.baseUrl, session.cookie!, '{ account { id } }');
    const byKey = await acct.api.get('/account');

    const hidden = (await acct.api.get('/logs?limit=100')).body.data;
    expect(hidden.some((l: any) => l.path === '/graphql')).toBe(false);
    expect(hidden.some((l: any) => l.request_id === byKey.headers.get('request-id'))).toBe(true);

    const shown = (await acct.api.get('/logs?limit=100&include_dashboard=true')).body.data;
    const dash = shown.find((l: any) => l.path === '/graphql');
    expect(dash).toMatchObject({ source: 'dashboard', status: 200 });
    expect(JSON.parse(dash.request_body).query).toContain('account');

    const gqlHidden = await gqlData(server.baseUrl, acct.sk, '{ logs(first: 100) { path source } }');
    expect(gqlHidden.logs.filter((l: any) => l.source === 'DASHBOARD')).toEqual([]);
    const gqlShown = await gqlData(server.baseUrl, acct.sk, '{ logs(first: 100, includeDashboard: true) { path source requestBody responseBody } }');
    expect(gqlShown.logs.filter((l: any) => l.source === 'DASHBOARD').length).toBeGreaterThanOrEqual(1);

    const bad = await acct.api.get('/logs?include_dashboard=maybe');
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('invalid_request');
  });
});
