import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MongoClient, type Db } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedMongo, type EmbeddedMongo } from '../src/index';
import { EXTERNAL_URI, skipIfExternal, sleep } from './helpers';

/**
 * TTL indexes through the driver. The embedded engine runs its TTL monitor every 100 ms here; a real
 * MongoDB (MONGODB_URI) is asked for a pass every second (setParameter ttlMonitorSleepSecs), so the same
 * assertions hold on both.
 */
let engine: EmbeddedMongo | undefined;
let client: MongoClient;
let db: Db;
const WAIT_MS = EXTERNAL_URI ? 90_000 : 10_000;

beforeAll(async () => {
  engine = EXTERNAL_URI ? undefined : await startEmbeddedMongo({ ttlMonitorIntervalMs: 100 });
  client = await new MongoClient(EXTERNAL_URI ?? engine!.uri).connect();
  db = client.db(`ttl_${Math.random().toString(36).slice(2, 10)}`);
  if (EXTERNAL_URI) await client.db('admin').command({ setParameter: 1, ttlMonitorSleepSecs: 1 }).catch(() => undefined);
}, 30_000);
afterAll(async () => {
  if (EXTERNAL_URI) await db.dropDatabase().catch(() => undefined);
  await client.close();
  await engine?.close();
});

async function waitFor(check: () => Promise<boolean>): Promise<void> {
  const until = Date.now() + WAIT_MS;
  while (!(await check())) {
    if (Date.now() > until) throw new Error('timed out waiting for the TTL monitor');
    await sleep(50);
  }
}

const HOUR = 3_600_000;

describe('TTL indexes', () => {
  it('delete documents whose date is older than expireAfterSeconds, and only those, as change events', { timeout: WAIT_MS + 10_000 }, async () => {
    const coll = db.collection<{ _id: string; at?: unknown }>('expiring');
    await coll.createIndex({ at: 1 }, { expireAfterSeconds: 3_600 });
    // The stream is opened (its aggregate sent) before the documents exist: the monitor runs every
    // 100 ms, and a stream opened after the inserts could miss deletes made before it started.
    const stream = coll.watch([{ $match: { operationType: 'delete' } }]);
    expect(await stream.tryNext()).toBeNull();
    const now = Date.now();
    await coll.insertMany([
      { _id: 'old', at: new Date(now - 2 * HOUR) },
      { _id: 'ancient', at: new Date(0) },
      { _id: 'old_in_array', at: [new Date(now + HOUR), new Date(now - 2 * HOUR)] },
      { _id: 'recent', at: new Date(now - 60_000) },
      { _id: 'future', at: new Date(now + HOUR) },
      { _id: 'number', at: now - 2 * HOUR },
      { _id: 'string', at: new Date(now - 2 * HOUR).toISOString() },
      { _id: 'null', at: null },
      { _id: 'missing' },
    ]);
    const deletedIds: unknown[] = [];
    const collecting = (async () => {
      for await (const e of stream) {
        if (e.operationType === 'delete') deletedIds.push(e.documentKey._id);
        if (deletedIds.length === 3) return;
      }
    })();
    await waitFor(async () => (await coll.countDocuments()) === 6);
    await collecting;
    await stream.close();
    expect((await coll.find({}, { projection: { _id: 1 } }).toArray()).map((d) => d._id).sort()).toEqual(['future', 'missing', 'null', 'number', 'recent', 'string']);
    expect(deletedIds.sort()).toEqual(['ancient', 'old', 'old_in_array']);
  });

  it('of a partial index delete only documents in its filter', { timeout: 2 * WAIT_MS + 10_000 }, async () => {
    const coll = db.collection<{ _id: string; state: string; done_at: Date | null }>('partial');
    await coll.createIndex({ done_at: 1 }, { expireAfterSeconds: 60, partialFilterExpression: { state: 'done' } });
    const old = new Date(Date.now() - HOUR);
    await coll.insertMany([
      { _id: 'done_old', state: 'done', done_at: old },
      { _id: 'failed_old', state: 'failed', done_at: old },
      { _id: 'done_new', state: 'done', done_at: new Date() },
    ]);
    await waitFor(async () => (await coll.countDocuments()) === 2);
    // A later pass has run once a document expired after the first pass is gone: still nothing else went.
    await coll.insertOne({ _id: 'done_later', state: 'done', done_at: old });
    await waitFor(async () => (await coll.countDocuments({ _id: 'done_later' })) === 0);
    expect((await coll.find().toArray()).map((d) => d._id).sort()).toEqual(['done_new', 'failed_old']);
  });

  it('expire thousands of documents in one pass, however many batches that takes', { timeout: WAIT_MS + 20_000 }, async () => {
    const coll = db.collection<{ _id: number; at: Date }>('many');
    await coll.createIndex({ at: -1 }, { expireAfterSeconds: 0 });
    const now = Date.now();
    await coll.insertMany(Array.from({ length: 2_500 }, (_, i) => ({ _id: i, at: new Date(now - 10_000 - i) })));
    await coll.insertOne({ _id: -1, at: new Date(now + HOUR) });
    await waitFor(async () => (await coll.countDocuments()) === 1);
    expect(await coll.findOne({})).toMatchObject({ _id: -1 });
  });
});

describe('TTL deletes are journaled', () => {
  it.skipIf(skipIfExternal('TTL deletes survive a restart of the embedded engine'))('a document expired before a restart stays gone after it', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ttl-'));
    try {
      const first = await startEmbeddedMongo({ dataDir: dir, ttlMonitorIntervalMs: 50 });
      const c1 = await new MongoClient(first.uri).connect();
      const coll = c1.db('d').collection<{ _id: string; at: Date }>('j');
      await coll.createIndex({ at: 1 }, { expireAfterSeconds: 1 });
      await coll.insertMany([
        { _id: 'gone', at: new Date(Date.now() - HOUR) },
        { _id: 'kept', at: new Date(Date.now() + HOUR) },
      ]);
      const until = Date.now() + 10_000;
      while ((await coll.countDocuments()) !== 1 && Date.now() < until) await sleep(20);
      await c1.close();
      await first.close();

      const second = await startEmbeddedMongo({ dataDir: dir, ttlMonitorIntervalMs: 3_600_000 });
      const c2 = await new MongoClient(second.uri).connect();
      expect((await c2.db('d').collection('j').find().toArray()).map((d) => d._id)).toEqual(['kept']);
      await c2.close();
      await second.close();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
