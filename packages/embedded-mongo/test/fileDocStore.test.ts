/**
 * With a data directory, documents are read from the data files (fileDocStore.ts, docFiles.ts):
 * where a write landed in the journal, where a snapshot moved it, where start-up found it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Binary, ObjectId } from 'bson';
import mongoose from 'mongoose';
import { describe, expect, it } from 'vitest';
import { DocFiles } from '../src/docFiles';
import { decodeDoc, encodeDoc } from '../src/docStore';
import { FileDocStore } from '../src/fileDocStore';
import { FieldPicker } from '../src/bsonRaw';
import { startEmbeddedMongo, type EmbeddedMongo } from '../src/index';
import { tempDirs } from './helpers';

const tempDir = tempDirs('embedded-files-');

interface Running {
  db: EmbeddedMongo;
  conn: mongoose.Connection;
  logs: string[];
  stop(): Promise<void>;
}

async function start(dataDir: string, compactBytes?: number): Promise<Running> {
  const logs: string[] = [];
  const db = await startEmbeddedMongo({ dataDir, compactBytes, logger: (msg) => logs.push(msg) });
  const conn = await mongoose.createConnection(db.uri, { dbName: 'files' }).asPromise();
  return {
    db,
    conn,
    logs,
    async stop() {
      await conn.close();
      await db.close();
    },
  };
}

/** Every document of `c`, by _id, as the engine returns them. */
async function all(r: Running, c = 'docs'): Promise<Map<string, Record<string, unknown>>> {
  const docs = await r.conn.collection(c).find({}).toArray();
  return new Map(docs.map((d) => [String(d._id), d as Record<string, unknown>]));
}

const sample = (i: number, v: number) => ({
  _id: `d${i}`,
  v,
  at: new Date(1_700_000_000_000 + i),
  oid: new ObjectId(i.toString(16).padStart(24, '0')),
  bin: new Binary(Buffer.from([i & 255, v & 255, 7])),
  nested: { list: [i, 'x'.repeat(i % 50)], ok: v % 2 === 0 },
});

describe('documents read from the data files', () => {
  it('reads documents written before and after a restart, through rewrites and deletes', async () => {
    const dir = tempDir();
    const expected = new Map<string, Record<string, unknown>>();
    let r = await start(dir);
    const c = () => r.conn.collection('docs');
    for (let i = 0; i < 300; i++) expected.set(`d${i}`, sample(i, 0));
    await c().insertMany([...expected.values()] as never[]);
    for (let i = 0; i < 300; i += 3) {
      expected.set(`d${i}`, sample(i, 1));
      await c().replaceOne({ _id: `d${i}` as never }, sample(i, 1));
    }
    expect(await all(r)).toEqual(expected);
    await r.stop();

    r = await start(dir);
    expect(await all(r)).toEqual(expected); // every one from the journal file
    for (let i = 1; i < 300; i += 3) {
      expected.delete(`d${i}`);
      await c().deleteOne({ _id: `d${i}` as never });
    }
    for (let i = 0; i < 300; i += 6) {
      expected.set(`d${i}`, sample(i, 2));
      await c().updateOne({ _id: `d${i}` as never }, { $set: { v: 2, 'nested.ok': true, bin: new Binary(Buffer.from([i & 255, 2, 7])) } });
    }
    for (let i = 300; i < 400; i++) {
      expected.set(`d${i}`, sample(i, 0));
      await c().insertOne(sample(i, 0) as never);
    }
    expect(await c().findOne({ _id: 'd6' as never })).toEqual(expected.get('d6'));
    expect(await c().findOne({ _id: 'd350' as never })).toEqual(expected.get('d350'));
    expect(await all(r)).toEqual(expected);
    await r.stop();

    r = await start(dir);
    expect(await all(r)).toEqual(expected);
    expect(await c().countDocuments({ v: 2 })).toBe(50);
    await r.stop();
  });

  it('keeps reading through snapshots: documents move to the new snapshot and the old journals go', async () => {
    const dir = tempDir();
    // 16 KiB: a snapshot every few dozen writes, while reads go on.
    const r0 = await start(dir, 16 * 1024);
    let r = r0;
    const c = () => r.conn.collection('docs');
    const expected = new Map<string, Record<string, unknown>>();
    const snapshots = () => r0.logs.filter((m) => m === 'embedded db: snapshot written').length;
    for (let i = 0; snapshots() < 4; i++) {
      const doc = sample(i % 120, Math.floor(i / 120));
      expected.set(doc._id, doc);
      await c().replaceOne({ _id: doc._id as never }, doc, { upsert: true });
      // Reads during a snapshot being written, and after it swapped in.
      if (i % 40 === 0) expect(await all(r)).toEqual(expected);
    }
    expect(await all(r)).toEqual(expected);
    const journals = () => fs.readdirSync(dir).filter((f) => f.startsWith('journal-'));
    // The old journals are deleted once the snapshot holds their documents; reads still work.
    expect(journals().length).toBeLessThanOrEqual(2);
    expect(await all(r)).toEqual(expected);
    await r.stop();

    r = await start(dir);
    expect(await all(r)).toEqual(expected);
    await r.stop();
  });

  it('reads the last version of a document rewritten many times, across snapshots and a restart', async () => {
    const dir = tempDir();
    let r = await start(dir, 8 * 1024);
    const c = () => r.conn.collection('docs');
    await c().insertOne({ _id: 'hot' as never, n: 0, pad: '' });
    for (let n = 1; n <= 400; n++) {
      await c().updateOne({ _id: 'hot' as never }, { $set: { n, pad: 'p'.repeat(n % 97) } });
      if (n % 50 === 0) expect(await c().findOne({ _id: 'hot' as never })).toEqual({ _id: 'hot', n, pad: 'p'.repeat(n % 97) });
    }
    await r.stop(); // waits for a snapshot in progress
    expect(r.logs).toContain('embedded db: snapshot written');
    r = await start(dir);
    expect(await c().findOne({ _id: 'hot' as never })).toEqual({ _id: 'hot', n: 400, pad: 'p'.repeat(400 % 97) });
    await r.stop();
  });
});

describe('FileDocStore', () => {
  /** A file holding `docs` one after the other; returns where each starts. */
  function writeFile(file: string, docs: Uint8Array[]): number[] {
    const at: number[] = [];
    let pos = 3; // not at 0: offsets are the file's, not the document's
    const parts = [Buffer.from([9, 9, 9])];
    for (const d of docs) {
      at.push(pos);
      parts.push(Buffer.from(d));
      pos += d.length;
    }
    fs.writeFileSync(file, Buffer.concat(parts));
    return at;
  }

  it('holds no bytes once they landed in a file, and never reads a replaced version back', () => {
    const dir = tempDir();
    const files = new DocFiles();
    const s = new FileDocStore(files);
    const first = Array.from({ length: 50 }, (_, i) => encodeDoc({ _id: i, v: 'old', i }));
    const a = path.join(dir, 'a');
    const firstAt = writeFile(a, first);
    const fa = files.open(a);
    first.forEach((d, i) => s.locate(`k${i}`, fa, firstAt[i]!, d.length));
    expect(s.get('k7')).toEqual({ _id: 7, v: 'old', i: 7 });

    // Rewrites: in memory until they land, then read from where they landed.
    const second = Array.from({ length: 25 }, (_, i) => encodeDoc({ _id: i * 2, v: 'new', i: i * 2 }));
    second.forEach((d, i) => s.put(`k${i * 2}`, d));
    expect(s.memoryBytes).toBe(second.reduce((n, d) => n + d.length, 0));
    const b = path.join(dir, 'b');
    const secondAt = writeFile(b, second);
    const fb = files.open(b);
    second.forEach((d, i) => s.landed(d, fb, secondAt[i]!));
    expect(s.memoryBytes).toBe(0);

    // The replaced versions' bytes are destroyed: reading one of them would fail to decode.
    const wiped = fs.readFileSync(a);
    for (let i = 0; i < 50; i += 2) wiped.fill(0xff, firstAt[i]!, firstAt[i]! + first[i]!.length);
    fs.writeFileSync(a, wiped);
    const want = (i: number) => ({ _id: i, v: i % 2 === 0 ? 'new' : 'old', i });
    for (let i = 0; i < 50; i++) expect(s.get(`k${i}`)).toEqual(want(i));
    expect([...s.entries()]).toEqual(Array.from({ length: 50 }, (_, i) => [`k${i}`, want(i)]));
    const picked = new Map(s.picked(new FieldPicker(['v'])));
    expect(picked.get('k10')).toEqual({ v: 'new' });
    expect(picked.get('k11')).toEqual({ v: 'old' });

    // A write rewritten before its first version landed: the late landing changes nothing.
    const v1 = encodeDoc({ _id: 1, v: 'v1' });
    const v2 = encodeDoc({ _id: 1, v: 'v2' });
    s.put('k1', v1);
    s.put('k1', v2);
    s.landed(v1, fb, secondAt[0]!);
    expect(s.get('k1')).toEqual({ _id: 1, v: 'v2' });
    files.closeAll();
    expect(() => s.stored('k3')).toThrow(/closed data file/);
  });

  it('reads a document synced moments ago from the bytes it kept, and older ones from their file', () => {
    const dir = tempDir();
    const files = new DocFiles();
    const s = new FileDocStore(files);
    const land = (name: string, docs: Array<[string, Uint8Array]>) => {
      docs.forEach(([k, d]) => s.put(k, d));
      const file = path.join(dir, name);
      const at = writeFile(file, docs.map(([, d]) => d));
      const f = files.open(file);
      docs.forEach(([, d], i) => s.landed(d, f, at[i]!));
      return file;
    };
    const v1 = encodeDoc({ _id: 1, v: 'first' });
    const a = land('a', [['k1', v1]]);
    expect(s.memoryBytes).toBe(0);
    // The file no longer holds it: only the bytes kept from the write can answer.
    fs.writeFileSync(a, Buffer.alloc(fs.statSync(a).size, 0xff));
    expect(decodeDoc(s.stored('k1')!)).toEqual({ _id: 1, v: 'first' });

    // A rewrite replaces the kept bytes.
    const v2 = encodeDoc({ _id: 1, v: 'second' });
    const b = land('b', [['k1', v2]]);
    expect(decodeDoc(s.stored('k1')!)).toEqual({ _id: 1, v: 'second' });

    // 5 MiB written since: k1's bytes are no longer kept, and it is read from its file.
    const big = 'x'.repeat(32 * 1024);
    land('c', Array.from({ length: 160 }, (_, i): [string, Uint8Array] => [`big${i}`, encodeDoc({ _id: i, big })]));
    expect(decodeDoc(s.stored('k1')!)).toEqual({ _id: 1, v: 'second' });
    fs.writeFileSync(b, Buffer.alloc(fs.statSync(b).size, 0xff));
    expect(Buffer.from(s.stored('k1')!).equals(Buffer.from(v2))).toBe(false);
    expect(decodeDoc(s.stored('big159')!)).toEqual({ _id: 159, big }); // the newest are still kept

    s.delete('big159');
    expect(s.stored('big159')).toBeUndefined();
    files.closeAll();
  });

  it('re-points captured documents to the snapshot, except those rewritten since the capture', () => {
    const dir = tempDir();
    const files = new DocFiles();
    const s = new FileDocStore(files);
    const docs = Array.from({ length: 30 }, (_, i) => encodeDoc({ _id: i, gen: 0 }));
    const a = path.join(dir, 'a');
    const at = writeFile(a, docs);
    const fa = files.open(a);
    docs.forEach((d, i) => s.locate(`k${i}`, fa, at[i]!, d.length));
    s.put('k29', encodeDoc({ _id: 29, gen: 1 })); // not landed yet: captured from memory

    const captured = s.capture();
    expect(captured.count).toBe(30);
    const bytes = captured.read(0, Infinity);
    s.put('k0', encodeDoc({ _id: 0, gen: 2 })); // rewritten after the capture
    s.delete('k1');
    const snap = path.join(dir, 'snap');
    const snapAt = writeFile(snap, bytes);
    captured.moved(files.open(snap), Float64Array.from(snapAt));
    files.retire(fa); // the old file is gone: nothing current may be read from it

    expect(s.memoryBytes).toBe(encodeDoc({ _id: 0, gen: 2 }).length);
    expect(s.get('k0')).toEqual({ _id: 0, gen: 2 });
    expect(s.get('k1')).toBeUndefined();
    expect(s.get('k29')).toEqual({ _id: 29, gen: 1 });
    expect([...s.values()].length).toBe(29);
    files.closeAll();
  });
});
