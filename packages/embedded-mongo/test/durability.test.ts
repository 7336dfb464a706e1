import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import mongoose from 'mongoose';
import { describe, expect, it } from 'vitest';
import { startEmbeddedMongo } from '../src/index';
import { skipIfExternal, tempDirs } from './helpers';

const root = path.resolve(__dirname, '..');
const tempDir = tempDirs('embedded-db-');

async function withEngine<T>(dataDir: string, fn: (conn: mongoose.Connection) => Promise<T>): Promise<T> {
  const db = await startEmbeddedMongo({ dataDir });
  const conn = await mongoose.createConnection(db.uri, { dbName: 'durable' }).asPromise();
  try {
    return await fn(conn);
  } finally {
    await conn.close();
    await db.close();
  }
}

describe('durability with a data directory', () => {
  it.skipIf(skipIfExternal('kill -9 journal recovery'))('every acknowledged write survives kill -9 of the engine process', async () => {
    const dataDir = tempDir();
    // `node --import tsx` keeps the engine in this very process: the tsx CLI would fork a
    // grandchild that survives a SIGKILL of the wrapper and keeps writing.
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(__dirname, 'fixtures/writer.ts')], {
      cwd: root,
      env: { ...process.env, DATA_DIR: dataDir, COMPACT_BYTES: String(48 * 1024) },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const acked: string[] = [];
    let maxCounter = 0;
    const exited = new Promise<NodeJS.Signals | null>((r) => child.on('exit', (_code, signal) => r(signal)));
    await new Promise<void>((resolve, reject) => {
      child.on('error', reject);
      child.on('exit', () => resolve());
      readline.createInterface({ input: child.stdout! }).on('line', (line) => {
        if (line.startsWith('ACK ')) acked.push(line.slice(4));
        if (line.startsWith('INC ')) maxCounter = Math.max(maxCounter, Number(line.slice(4)));
        if (acked.length === 600) {
          child.kill('SIGKILL');
          resolve();
        }
      });
    });
    expect(await exited).toBe('SIGKILL');
    expect(acked.length).toBeGreaterThanOrEqual(600);
    // The small compaction threshold made the child write snapshots while it ran.
    expect(fs.existsSync(path.join(dataDir, 'snapshot.bson'))).toBe(true);

    await withEngine(dataDir, async (conn) => {
      const ids = new Set((await conn.collection('acks').find({}, { projection: { _id: 1 } }).toArray()).map((d) => String(d._id)));
      const missing = acked.filter((id) => !ids.has(id));
      expect(missing).toEqual([]);
      const counter = await conn.collection('counters').findOne({ _id: 'c' as never });
      expect(counter!.v).toBeGreaterThanOrEqual(maxCounter);
      // Indexes come back too: the unique index still rejects duplicates.
      const seq0 = await conn.collection('acks').findOne({}, { sort: { seq: 1 } });
      const err = await conn.collection('acks').insertOne({ seq: seq0!.seq }).catch((e: unknown) => e);
      expect((err as { code: number }).code).toBe(11000);
    });
  });

  it.skipIf(skipIfExternal('journal torn-tail recovery'))('restarts cleanly (snapshot + journal) and tolerates a torn journal tail', async () => {
    const dataDir = tempDir();
    await withEngine(dataDir, async (conn) => {
      await conn.collection('items').insertMany(Array.from({ length: 50 }, (_, i) => ({ _id: i as never, v: i })));
      await conn.collection('items').updateOne({ _id: 7 as never }, { $set: { v: 700 } });
      await conn.collection('items').deleteOne({ _id: 8 as never });
      await conn.collection('items').createIndex({ v: 1 });
    });
    const journals = fs.readdirSync(dataDir).filter((f) => f.startsWith('journal-'));
    expect(journals.length).toBeGreaterThan(0);
    // Simulate a crash in the middle of an append: half a record at the end of the journal.
    fs.appendFileSync(path.join(dataDir, journals.sort().at(-1)!), Buffer.from([200, 0, 0, 0, 1, 2, 3]));
    await withEngine(dataDir, async (conn) => {
      const items = conn.collection('items');
      expect(await items.countDocuments()).toBe(49);
      expect((await items.findOne({ _id: 7 as never }))!.v).toBe(700);
      expect(await items.findOne({ _id: 8 as never })).toBeNull();
      expect((await items.indexes()).map((i) => i.name)).toContain('v_1');
      // The index is rebuilt from the recovered documents: updates and deletes replayed after it was made count.
      const top = await items.find({ v: { $gte: 45 } }).sort({ v: 1 }).toArray();
      expect(top.map((d) => d.v)).toEqual([45, 46, 47, 48, 49, 700]);
      expect(await items.findOne({ v: 8 })).toBeNull();
      await items.insertOne({ _id: 100 as never, v: 1 });
    });
    await withEngine(dataDir, async (conn) => {
      expect(await conn.collection('items').countDocuments()).toBe(50);
    });
  });

  it.skipIf(skipIfExternal('memory mode'))('keeps nothing on disk without a data directory', async () => {
    const db = await startEmbeddedMongo();
    const conn = await mongoose.createConnection(db.uri, { dbName: 'mem' }).asPromise();
    await conn.collection('x').insertOne({ a: 1 });
    await conn.close();
    await db.close();
    const db2 = await startEmbeddedMongo();
    const conn2 = await mongoose.createConnection(db2.uri, { dbName: 'mem' }).asPromise();
    expect(await conn2.collection('x').countDocuments()).toBe(0);
    await conn2.close();
    await db2.close();
  });
});
