import { afterAll, beforeAll, expect, it } from 'vitest';
import { ApiKeyModel } from '../../src/domain/accounts/apiKeyModel';
import { listRequestLogs, refusedRequestCounts } from '../../src/domain/logs/requestLogService';
import { createAccount } from '../support/accounts';
import { ApiClient } from '../support/client';
import { startTestServer, type TestServer } from '../support/server';

/**
 * Issue 16, item 5: 401 and 429 answers were stored in the request log one by one, so a client
 * hammering past its limit wrote a document per refusal and pushed real requests out of GET /logs.
 * They are now counted per account and hour (`refused_requests`) and not logged.
 */
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ RATE_LIMIT_PER_MINUTE: '3' });
});
afterAll(async () => server?.stop());

const total = (rows: Array<{ unauthorized: number; rate_limited: number }>, field: 'unauthorized' | 'rate_limited') =>
  rows.reduce((n, r) => n + r[field], 0);

it('a 429 is counted for its account, not stored in the request log', async () => {
  const acct = await createAccount(server.baseUrl);
  const statuses: number[] = [];
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) {
    const res = await acct.api.get('/payment_methods');
    statuses.push(res.status);
    ids.push(res.headers.get('request-id')!);
  }
  expect(statuses).toEqual([200, 200, 200, 429, 429]);
  // What GET /logs lists (its key is over its limit for a minute, so the service it calls is read).
  const key = await ApiKeyModel.findOne({ account_id: acct.id, type: 'secret' }).lean();
  const logged = (await listRequestLogs({ _id: key!._id, account_id: acct.id }, 100)).map((l) => l._id);
  expect(logged).toEqual(expect.arrayContaining(ids.slice(0, 3)));
  expect(logged).not.toContain(ids[3]);
  expect(logged).not.toContain(ids[4]);
  const counts = await refusedRequestCounts(acct.id);
  expect(total(counts, 'rate_limited')).toBe(2);
  expect(total(counts, 'unauthorized')).toBe(0);
});

it('a 401 is not in GET /v1/logs but counted (under no account: the key named none)', async () => {
  const acct = await createAccount(server.baseUrl);
  const before = total(await refusedRequestCounts(null), 'unauthorized');
  const refused = await new ApiClient(server.baseUrl, 'sk_test_00000000000000000000000000000000').get('/account');
  expect(refused.status).toBe(401);
  const logs = await acct.api.get('/logs?limit=100');
  expect(logs.status).toBe(200);
  expect(logs.body.data.map((l: { request_id: string }) => l.request_id)).not.toContain(refused.headers.get('request-id'));
  expect(total(await refusedRequestCounts(null), 'unauthorized')).toBe(before + 1);
});
