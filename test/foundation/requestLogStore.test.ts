import { afterAll, beforeAll, expect, it } from 'vitest';
import { logFacets } from '../../src/domain/logs/logFacets';
import { batchDocuments, RequestLogBatchModel } from '../../src/domain/logs/requestLogBatchModel';
import { entryBytes } from '../../src/domain/logs/requestLogHold';
import { RequestLogModel, type RequestLogRecord } from '../../src/domain/logs/requestLogModel';
import { deleteRequestLogs, readRequestLogs } from '../../src/domain/logs/requestLogStore';
import { sharedGateway, type TestServer } from '../support/server';

/**
 * The stored request log (src/domain/logs/requestLogStore.ts): entries live in documents of a key's
 * flush, and a listing picks the newest that match from the documents holding one. Written here as
 * two gateway processes would write them (documents whose times overlap), beside entries stored one
 * per document before the batches; each listing is checked against the same entries sorted and
 * filtered one by one.
 */
let server: TestServer;
beforeAll(async () => {
  server = await sharedGateway();
});
afterAll(async () => server?.stop());

const T0 = Date.UTC(2026, 11, 7, 12, 0, 0);
let counter = 0;

function entry(accountId: string, at: number, fields: Partial<RequestLogRecord> = {}): RequestLogRecord {
  const base = {
    _id: `req_store${String(counter++).padStart(19, '0')}`,
    account_id: accountId,
    api_key_id: 'key_store',
    method: 'GET',
    path: '/v1/payment_intents',
    status: 200,
    error_code: null,
    latency_ms: 1,
    created_at: new Date(T0 + at),
    source: 'api' as const,
    request_body: null,
    response_body: '{}',
    ...fields,
  };
  return { ...base, facets: logFacets(base) };
}

/** What a listing must answer: the entries one by one, newest first, filtered, cut. */
function expected(entries: RequestLogRecord[], limit: number, keep: (e: RequestLogRecord) => boolean): string[] {
  return [...entries]
    .filter(keep)
    .sort((a, b) => b.created_at.getTime() - a.created_at.getTime())
    .slice(0, limit)
    .map((e) => e._id);
}

const key = (accountId: string) => ({ _id: 'key_store', account_id: accountId });
const ids = (list: RequestLogRecord[]) => list.map((e) => e._id);

it('lists the newest entries across documents whose times overlap, as two processes write them', async () => {
  const acct = `acct_store_overlap_${Date.now()}`;
  // Process A flushed entries at 0, 20, 40, …; process B at 10, 30, 50, …; each flush a document.
  const a = Array.from({ length: 30 }, (_, i) => entry(acct, 20 * i));
  const b = Array.from({ length: 30 }, (_, i) => entry(acct, 20 * i + 10));
  // A document spanning them all (a flush held back by a slow database): read first, as it holds the
  // newest entry, and its oldest must not end the listing.
  const held = [entry(acct, -1_000), entry(acct, 5_000)];
  const docs = [
    ...batchDocuments(held, entryBytes),
    ...batchDocuments(a.slice(0, 10), entryBytes),
    ...batchDocuments(b.slice(0, 15), entryBytes),
    ...batchDocuments(a.slice(10), entryBytes),
    ...batchDocuments(b.slice(15), entryBytes),
  ];
  expect(docs).toHaveLength(5);
  await RequestLogBatchModel.insertMany(docs);
  const all = [...held, ...a, ...b];
  for (const limit of [1, 2, 5, 21, 40, 62, 101]) {
    expect(ids(await readRequestLogs(key(acct), limit, {})), `limit ${limit}`).toEqual(expected(all, limit, () => true));
  }
});

it('picks entries by every filter, not by what a document holds together', async () => {
  const acct = `acct_store_filter_${Date.now()}`;
  // One document holds a POST answered 201 and a GET answered 404: it holds both `m:POST` and `s:4`
  // but no POST answered 4xx.
  const mixed = [entry(acct, 0, { method: 'POST', status: 201 }), entry(acct, 1, { status: 404, path: '/v1/payment_intents/pay_x' })];
  const wanted = [entry(acct, 2, { method: 'POST', status: 400 })];
  const dashboard = [entry(acct, 3, { source: 'dashboard' }), entry(acct, 4, { source: 'dashboard', method: 'POST', status: 402 })];
  const deep = [entry(acct, 5, { path: '/v1/webhook_endpoints/whe_1/deliveries/whd_1/retry', method: 'POST' })];
  await RequestLogBatchModel.insertMany([...batchDocuments(mixed, entryBytes), ...batchDocuments([...wanted, ...dashboard, ...deep], entryBytes)]);
  const all = [...mixed, ...wanted, ...dashboard, ...deep];
  const api = (e: RequestLogRecord) => e.source !== 'dashboard';

  expect(ids(await readRequestLogs(key(acct), 20, { method: 'POST', statusClass: 4 }))).toEqual(ids(wanted));
  expect(ids(await readRequestLogs(key(acct), 20, {}))).toEqual(expected(all, 20, api));
  expect(ids(await readRequestLogs(key(acct), 20, { includeDashboard: true }))).toEqual(expected(all, 20, () => true));
  expect(ids(await readRequestLogs(key(acct), 20, { source: 'dashboard' }))).toEqual(expected(all, 20, (e) => !api(e)));
  expect(ids(await readRequestLogs(key(acct), 20, { statusClass: 4, includeDashboard: true }))).toEqual(expected(all, 20, (e) => e.status >= 400));
  expect(ids(await readRequestLogs(key(acct), 20, { pathPrefix: '/v1/payment_intents/pay_x' }))).toEqual([mixed[1]!._id]);
  // Deeper than the facets go: the rest of the path is matched on the entry.
  expect(ids(await readRequestLogs(key(acct), 20, { pathPrefix: '/v1/webhook_endpoints/whe_1/deliveries/whd_1' }))).toEqual(ids(deep));
  expect(await readRequestLogs(key(acct), 20, { pathPrefix: '/v1/webhook_endpoints/whe_1/deliveries/whd_2' })).toEqual([]);
  // Another key of the account sees none of them.
  expect(await readRequestLogs({ _id: 'key_other', account_id: acct }, 20, { includeDashboard: true })).toEqual([]);
});

it('lists entries stored one per document before the batches among the others, and a reset deletes and counts both', async () => {
  const acct = `acct_store_before_${Date.now()}`;
  const before = [entry(acct, 5), entry(acct, 15, { source: 'dashboard' }), entry(acct, 25)];
  const batched = [entry(acct, 0), entry(acct, 10), entry(acct, 20), entry(acct, 30)];
  await RequestLogModel.insertMany(before.map(({ facets: _facets, ...rest }) => rest));
  await RequestLogBatchModel.insertMany(batchDocuments(batched, entryBytes));
  const all = [...before, ...batched];
  expect(ids(await readRequestLogs(key(acct), 5, {}))).toEqual(expected(all, 5, (e) => e.source !== 'dashboard'));
  expect(ids(await readRequestLogs(key(acct), 3, { includeDashboard: true }))).toEqual(expected(all, 3, () => true));

  expect(await deleteRequestLogs(acct)).toBe(7);
  expect(await readRequestLogs(key(acct), 100, { includeDashboard: true })).toEqual([]);
  expect(await deleteRequestLogs(acct)).toBe(0);
});

it("groups a flush's entries by key, in their order, and splits a key's entries where a document would pass 4 MiB", () => {
  const acct = 'acct_store_split';
  const big = 'x'.repeat(4096);
  const entries = Array.from({ length: 1_200 }, (_, i) =>
    entry(acct, i, { api_key_id: i % 2 === 0 ? 'key_even' : 'key_odd', request_body: big, response_body: big }),
  );
  const docs = batchDocuments(entries, entryBytes);
  // Each entry counts 512 + 19 (its path) + 8,192 bytes: 480 of them fit in 4 MiB, so each key's 600 make two documents.
  expect(docs.map((d) => [d.api_key_id, d.n])).toEqual([
    ['key_even', 480],
    ['key_odd', 480],
    ['key_even', 120],
    ['key_odd', 120],
  ]);
  for (const d of docs) {
    expect(d.entries.every((e) => e.api_key_id === d.api_key_id)).toBe(true);
    expect(d._id).toBe(d.entries[0]!._id);
    expect(d.first_at).toEqual(d.entries[0]!.created_at);
    expect(d.last_at).toEqual(d.entries.at(-1)!.created_at);
    expect(new Set(d.facets)).toEqual(new Set(d.entries.flatMap((e) => e.facets)));
  }
  expect(docs.flatMap((d) => d.entries)).toHaveLength(1_200);
});
