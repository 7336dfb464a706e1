import mongoose from 'mongoose';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startEmbeddedMongo, type EmbeddedMongo } from '@pgw/embedded-mongo';
import { HELD_MAX_BYTES, HELD_MAX_ENTRIES, entryBytes } from '../../src/domain/logs/requestLogHold';
import type { RequestLogRecord } from '../../src/domain/logs/requestLogModel';
import { RequestLogBatchModel } from '../../src/domain/logs/requestLogBatchModel';
import { flushRequestLogs, recordRequest, requestLogHeld } from '../../src/domain/logs/requestLogService';
import { metricsText } from '../../src/metrics/registry';
import { HoldingProxy } from '../support/holdingProxy';

/**
 * The request log's entries held in memory while the database does not answer (src/domain/logs/
 * requestLogHold.ts): the real service over the real engine, behind a proxy that holds what the
 * driver sends. They stop at HELD_MAX_ENTRIES and at HELD_MAX_BYTES; past them the oldest entries not
 * yet sent are dropped and counted in pgw_request_log_dropped_total; the inserts already sent land
 * once the database answers, with every entry kept.
 */
let engine: EmbeddedMongo;
let proxy: HoldingProxy;

beforeAll(async () => {
  engine = await startEmbeddedMongo({ port: 0 });
  proxy = new HoldingProxy(engine.port!);
  await proxy.start();
  await mongoose.connect(`mongodb://127.0.0.1:${proxy.port}/pgw?directConnection=true`);
  await RequestLogBatchModel.init();
});

afterAll(async () => {
  proxy?.release();
  await flushRequestLogs();
  await mongoose.disconnect();
  await proxy?.stop();
  await engine?.close();
});

function entry(tag: string, i: number, body: string, answer: string | null = null): RequestLogRecord {
  return {
    _id: `req_${tag}_${String(i).padStart(5, '0')}`,
    account_id: 'acct_bound',
    api_key_id: 'key_bound',
    method: 'POST',
    path: '/v1/payment_intents',
    status: 201,
    error_code: null,
    latency_ms: 1,
    created_at: new Date(),
    source: 'api',
    request_body: body,
    response_body: answer,
  };
}

async function droppedTotal(): Promise<number> {
  const { text } = await metricsText();
  return Number(/^pgw_request_log_dropped_total (\d+)$/m.exec(text)?.[1] ?? NaN);
}

// Stored in documents of entries (requestLogBatchModel.ts): the ids of those this tag made.
const storedIds = async (tag: string) =>
  (await RequestLogBatchModel.find({ account_id: 'acct_bound' }, { 'entries._id': 1 }).lean<Array<{ entries: Array<{ _id: string }> }>>())
    .flatMap((d) => d.entries.map((e) => e._id))
    .filter((id) => id.startsWith(`req_${tag}_`))
    .sort();

it(`holds at most ${HELD_MAX_ENTRIES} entries while the database does not answer, dropping the oldest not yet sent`, async () => {
  const before = await droppedTotal();
  const total = HELD_MAX_ENTRIES + 1_000;
  proxy.hold();
  let most = 0;
  for (let i = 0; i < total; i++) {
    recordRequest(entry('n', i, '{"amount":5000,"currency":"AOA"}'));
    most = Math.max(most, requestLogHeld().entries);
  }
  expect(most).toBe(HELD_MAX_ENTRIES);
  expect(requestLogHeld().entries).toBe(HELD_MAX_ENTRIES);
  expect(await droppedTotal()).toBe(before + 1_000);

  proxy.release();
  await flushRequestLogs();
  expect(requestLogHeld()).toEqual({ entries: 0, bytes: 0 });
  const stored = await storedIds('n');
  expect(stored).toHaveLength(HELD_MAX_ENTRIES);
  // The two inserts sent when the database stopped answering (500 entries each) land; the oldest of
  // those that waited behind them are the ones gone; the newest are all there.
  expect(stored).toContain('req_n_00000');
  expect(stored).toContain('req_n_00999');
  expect(stored).not.toContain('req_n_01000');
  expect(stored).not.toContain('req_n_01999');
  expect(stored[1_000]).toBe('req_n_02000');
  expect(stored.at(-1)).toBe(`req_n_0${total - 1}`);
});

it('holds at most HELD_MAX_BYTES of entries with large bodies, then writes what it kept', async () => {
  const before = await droppedTotal();
  // A request body and its answer of 64 KiB each: some 250 entries fill the bytes, short of a batch.
  const body = `{"metadata":"${'x'.repeat(64 * 1024 - 16)}"}`;
  const one = entryBytes(entry('b', 0, body, body));
  const total = 1_000;
  proxy.hold();
  let most = 0;
  for (let i = 0; i < total; i++) {
    recordRequest(entry('b', i, body, body));
    most = Math.max(most, requestLogHeld().bytes);
  }
  // Read before anything awaits: the flush timer would send the queue on.
  const held = requestLogHeld();
  expect(total * one).toBeGreaterThan(HELD_MAX_BYTES);
  expect(most).toBeLessThanOrEqual(HELD_MAX_BYTES);
  // It stops at the bound, not short of it: one more entry would not have fit.
  expect(held.bytes + one).toBeGreaterThan(HELD_MAX_BYTES);
  expect(held.entries).toBeLessThan(HELD_MAX_ENTRIES);
  const dropped = (await droppedTotal()) - before;
  expect(dropped).toBeGreaterThan(0);

  proxy.release();
  await flushRequestLogs();
  expect(requestLogHeld()).toEqual({ entries: 0, bytes: 0 });
  const stored = await storedIds('b');
  expect(stored).toHaveLength(total - dropped);
  expect(stored.at(-1)).toBe(`req_b_00${total - 1}`);
});
