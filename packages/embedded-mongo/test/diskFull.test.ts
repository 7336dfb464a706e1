import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import mongoose from 'mongoose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedMongo, type EmbeddedMongo } from '../src/index';
import { errorCode, skipIfExternal } from './helpers';
import { fillDisk, mountTmpfs, unmount } from './tmpfs';

/**
 * A full disk under the engine (a small tmpfs filled by a filler file): a write the journal cannot
 * take is refused with OutOfDiskSpace (14031) and taken back, reads go on, writes come back as soon
 * as the filler is removed, and a restart finds exactly the acknowledged writes, with no torn tail.
 */
const OUT_OF_DISK_SPACE = 14031;
/** Bigger than a page: a write must allocate, not fit in what is left of the journal's last page. */
const PAD = 'x'.repeat(32 * 1024);

const mountPoint = fs.mkdtempSync(path.join(os.tmpdir(), 'embedded-db-full-'));
const whyNot = skipIfExternal('a full disk under the embedded engine') ? 'MONGODB_URI is set' : mountTmpfs(mountPoint, '3m');
if (whyNot) console.warn(`\n!!! SKIPPED: disk-full tests need a small tmpfs (${whyNot})\n`);

describe.skipIf(whyNot !== undefined)('a full disk', () => {
  const dataDir = path.join(mountPoint, 'data');
  const filler = path.join(mountPoint, 'filler');
  const logs: string[] = [];
  let db: EmbeddedMongo;
  let conn: mongoose.Connection;

  const open = async () => {
    db = await startEmbeddedMongo({ dataDir, logger: (msg) => logs.push(msg) });
    conn = await mongoose.createConnection(db.uri, { dbName: 'full' }).asPromise();
  };
  const close = async () => {
    await conn.close();
    await db.close();
  };
  const docs = () => conn.collection<{ _id: number; n?: number; k?: string }>('docs');

  beforeAll(async () => {
    await open();
    await docs().createIndex({ k: 1 }, { unique: true });
    await docs().insertMany(Array.from({ length: 20 }, (_, i) => ({ _id: i, n: 0, k: `k${i}` })));
  });

  afterAll(async () => {
    await close().catch(() => undefined);
    unmount(mountPoint);
  });

  it('refuses every write it cannot journal, takes it back, and keeps serving reads', async () => {
    expect(fillDisk(filler)).toBe('ENOSPC');
    const refused = async (write: () => Promise<unknown>) => {
      const err = await write().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(errorCode(err), String(err)).toBe(OUT_OF_DISK_SPACE);
    };
    await refused(() => docs().insertOne({ _id: 100, k: 'new', pad: PAD } as never));
    // Within the pause that follows a refusal, a write acknowledged once applied ({ w: 1 }) is refused
    // as well: answered as applied, it would have been taken back behind its client's back, and the
    // client's next write (journaled once space is back) would rest on nothing.
    await refused(() => docs().insertOne({ _id: 104, k: 'w1' } as never, { writeConcern: { w: 1 } }));
    await refused(() => docs().updateOne({ _id: 1 }, { $set: { n: 1, pad: PAD } }));
    // Small records may still fit in what is left of the journal's last page: use it up with tiny
    // writes (acknowledged, in another collection), then one delete of three documents is refused.
    for (let i = 0; ; i++) {
      const err = await conn.collection<{ _id: number }>('fill').insertOne({ _id: i }).then(() => undefined, (e: unknown) => e);
      if (err) break;
    }
    await refused(() => docs().deleteMany({ _id: { $in: [2, 5, 6] } }));
    await refused(() => docs().insertMany([{ _id: 101, k: 'a', pad: PAD }, { _id: 102, k: 'b', pad: PAD }] as never[]));
    // Concurrent writes to one document share a batch: all refused, none left applied.
    await Promise.all(Array.from({ length: 10 }, () => refused(() => docs().updateOne({ _id: 3 }, { $inc: { n: 1 }, $set: { pad: PAD } }))));
    // A unique key a refused write held is free again: nothing of it stayed in the index.
    await refused(() => docs().updateOne({ _id: 4 }, { $set: { k: 'moved', pad: PAD } }));

    // A transaction whose commit cannot be journaled is aborted: none of its writes stay.
    const session = conn.getClient().startSession();
    try {
      session.startTransaction();
      await docs().insertOne({ _id: 103, k: 't', pad: PAD } as never, { session });
      await docs().updateOne({ _id: 7 }, { $set: { n: 7 } }, { session });
      await refused(() => session.commitTransaction());
    } finally {
      await session.endSession();
    }

    expect(await docs().countDocuments()).toBe(20);
    expect(await docs().findOne({ _id: 7 })).toEqual({ _id: 7, n: 0, k: 'k7' });
    expect(await docs().findOne({ _id: 1 })).toEqual({ _id: 1, n: 0, k: 'k1' });
    expect(await docs().findOne({ _id: 2 })).toEqual({ _id: 2, n: 0, k: 'k2' });
    expect(await docs().findOne({ _id: 3 })).toEqual({ _id: 3, n: 0, k: 'k3' });
    expect(await docs().findOne({ _id: 5 })).toEqual({ _id: 5, n: 0, k: 'k5' });
    expect(await docs().findOne({ _id: 6 })).toEqual({ _id: 6, n: 0, k: 'k6' });
    expect(await docs().findOne({ k: 'k4' })).toEqual({ _id: 4, n: 0, k: 'k4' });
    expect(await docs().findOne({ k: 'moved' })).toBeNull();
    expect(await docs().findOne({ _id: 100 })).toBeNull();
    expect(await docs().findOne({ _id: 104 })).toBeNull();
  });

  it('accepts writes again as soon as space is freed, without a restart', async () => {
    fs.rmSync(filler);
    // Writes resume after a short pause that follows the last refusal (journal.ts, QUARANTINE_MS).
    const freed = performance.now();
    for (;;) {
      const err = await docs().insertOne({ _id: 100, k: 'new', pad: PAD } as never).then(() => undefined, (e: unknown) => e);
      if (!err) break;
      expect(errorCode(err)).toBe(OUT_OF_DISK_SPACE);
      expect(performance.now() - freed).toBeLessThan(5_000);
      await new Promise((r) => setTimeout(r, 100));
    }
    await docs().updateOne({ _id: 1 }, { $set: { n: 1 } });
    await docs().updateOne({ _id: 4 }, { $set: { k: 'moved' } });
    await docs().deleteOne({ _id: 2 });
    expect(await docs().countDocuments()).toBe(20);
    expect(await docs().findOne({ k: 'moved' }, { projection: { _id: 1 } })).toEqual({ _id: 4 });
  });

  it('restarts with exactly the acknowledged writes and no torn record', async () => {
    await close();
    logs.length = 0;
    await open();
    expect(logs.some((m) => m.includes('torn'))).toBe(false);
    expect(await docs().countDocuments()).toBe(20);
    expect(await docs().findOne({ _id: 1 }, { projection: { n: 1 } })).toEqual({ _id: 1, n: 1 });
    expect(await docs().findOne({ _id: 2 })).toBeNull();
    expect(await docs().findOne({ _id: 3 })).toEqual({ _id: 3, n: 0, k: 'k3' });
    expect(await docs().findOne({ _id: 101 })).toBeNull();
    expect(await docs().findOne({ k: 'moved' }, { projection: { _id: 1 } })).toEqual({ _id: 4 });
    // The unique index came back from the journal and still holds.
    await expect(docs().insertOne({ _id: 200, k: 'moved' })).rejects.toMatchObject({ code: 11000 });
  });
});

describe.skipIf(whyNot !== undefined)('a read-only data directory', () => {
  const roMount = fs.mkdtempSync(path.join(os.tmpdir(), 'embedded-db-ro-'));

  afterAll(() => unmount(roMount));

  it('refuses to start with an error that says so and what to do', async () => {
    expect(mountTmpfs(roMount, '1m', true)).toBeUndefined();
    for (const dataDir of [roMount, path.join(roMount, 'data')]) {
      const err = await startEmbeddedMongo({ dataDir }).then(
        (db) => db.close().then(() => undefined),
        (e: unknown) => e as Error,
      );
      expect(err?.message).toContain(`the data directory ${dataDir} is on a read-only file system`);
      expect(err?.message).toContain('DATA_DIR');
    }
  });
});
