import mongoose from 'mongoose';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type TestServer } from '../support/server';
import { sharedGateway } from '../support/server';

/**
 * Issue 16, item 5: request logs and per-IP rate-limit counters were never pruned. TTL indexes now
 * delete them (README "What is kept, and for how long"); the expiries here are the documented defaults.
 */
let server: TestServer;
beforeAll(async () => {
  server = await sharedGateway();
});
afterAll(async () => server?.stop());

async function ttlIndexes(collection: string): Promise<Array<{ key: Record<string, unknown>; expireAfterSeconds: number }>> {
  const indexes = await mongoose.connection.db!.collection(collection).listIndexes().toArray();
  return indexes.filter((i) => i.expireAfterSeconds !== undefined).map((i) => ({ key: i.key, expireAfterSeconds: i.expireAfterSeconds }));
}

it.each([
  ['request_log_batches', { last_at: 1 }, 30 * 86_400],
  // Entries stored one per document before the batches, until they expire.
  ['request_logs', { created_at: 1 }, 30 * 86_400],
  ['rate_limits', { window_end: 1 }, 60],
  ['refused_requests', { hour: 1 }, 30 * 86_400],
])('%s has a TTL index on %o expiring after %i s', async (collection, key, seconds) => {
  expect(await ttlIndexes(collection)).toEqual([{ key, expireAfterSeconds: seconds }]);
});
