/**
 * What the engine keeps on disk and how it treats it at start-up: the data directory and its files are
 * owner-only (the engine has no authentication; file permissions are all that keeps other users out of
 * the data). Skipped (with a warning) when MONGODB_URI points elsewhere.
 */
import fs from 'node:fs';
import path from 'node:path';
import mongoose from 'mongoose';
import { describe, expect, it } from 'vitest';
import { startEmbeddedMongo, type EmbeddedMongoOptions } from '../src/index';
import { skipIfExternal, tempDirs } from './helpers';

const tempDir = tempDirs('embedded-files-');

const mode = (p: string) => fs.lstatSync(p).mode & 0o777;

/** Starts the engine on `dataDir`, runs `fn` on a connection, closes both; returns what the engine logged. */
async function withEngine(dataDir: string, fn: (conn: mongoose.Connection) => Promise<void>, opts: EmbeddedMongoOptions = {}) {
  const logged: Array<{ msg: string; extra?: object }> = [];
  const db = await startEmbeddedMongo({ dataDir, logger: (msg, extra) => logged.push({ msg, extra }), ...opts });
  const conn = await mongoose.createConnection(db.uri, { dbName: 'files' }).asPromise();
  try {
    await fn(conn);
  } finally {
    await conn.close();
    await db.close();
  }
  return logged;
}

/** Enough documents to pass a small compactBytes several times over. */
async function writeBatches(conn: mongoose.Connection, batches: number, from = 0): Promise<void> {
  for (let b = 0; b < batches; b++) {
    const docs = Array.from({ length: 20 }, (_, i) => ({ _id: from + b * 20 + i, pad: 'x'.repeat(200) }));
    await conn.collection('items').insertMany(docs as never[]);
  }
}

describe('data directory permissions', () => {
  it.skipIf(skipIfExternal('embedded data directory permissions'))('creates the directory 0700 and every file it writes (journals, snapshot) 0600', async () => {
    const dataDir = path.join(tempDir(), 'nested', 'data');
    await withEngine(dataDir, (conn) => writeBatches(conn, 5), { compactBytes: 4096 });
    const files = fs.readdirSync(dataDir).sort();
    expect(files).toContain('snapshot.bson');
    expect(files.some((f) => /^journal-\d+\.log$/.test(f))).toBe(true);
    expect(mode(dataDir)).toBe(0o700);
    expect(files.map((f) => [f, mode(path.join(dataDir, f))])).toEqual(files.map((f) => [f, 0o600]));
  });

  it.skipIf(skipIfExternal('embedded data directory permissions'))('tightens a directory and files left open to others, and says so once', async () => {
    const dataDir = path.join(tempDir(), 'data');
    await withEngine(dataDir, (conn) => writeBatches(conn, 1));
    fs.chmodSync(dataDir, 0o755);
    fs.writeFileSync(path.join(dataDir, 'notes.txt'), 'left here by a person', { mode: 0o644 });
    const files = fs.readdirSync(dataDir).sort();
    for (const f of files) fs.chmodSync(path.join(dataDir, f), 0o644);

    const logged = await withEngine(dataDir, async (conn) => {
      expect(await conn.collection('items').countDocuments()).toBe(20);
    });
    expect(mode(dataDir)).toBe(0o700);
    expect(files.map((f) => [f, mode(path.join(dataDir, f))])).toEqual(files.map((f) => [f, 0o600]));
    const told = logged.filter((l) => l.msg.includes('owner-only'));
    expect(told).toHaveLength(1);
    expect([...(told[0]!.extra as { changed: string[] }).changed].sort()).toEqual(['. 755→700', ...files.map((f) => `${f} 644→600`)].sort());

    // Already private: nothing to say the next time.
    const again = await withEngine(dataDir, async () => {});
    expect(again.filter((l) => l.msg.includes('owner-only'))).toEqual([]);
  });
});

/**
 * A data directory with several journal files, as a crash during compaction leaves it (the next
 * journal opened, the snapshot not yet renamed into place): `snapshot.tmp` is held by a directory while
 * the engine runs, so every snapshot fails and every journal is kept.
 */
async function severalJournals(): Promise<{ dataDir: string; journals: string[]; total: number }> {
  const dataDir = path.join(tempDir(), 'data');
  const batches = 8;
  await withEngine(
    dataDir,
    async (conn) => {
      fs.mkdirSync(path.join(dataDir, 'snapshot.tmp'));
      for (let b = 0; b < batches; b++) await writeBatches(conn, 1, b * 20);
    },
    { compactBytes: 6000 },
  );
  fs.rmdirSync(path.join(dataDir, 'snapshot.tmp'));
  const journals = fs
    .readdirSync(dataDir)
    .filter((f) => /^journal-\d+\.log$/.test(f))
    .sort((a, b) => Number(/\d+/.exec(a)![0]) - Number(/\d+/.exec(b)![0]));
  return { dataDir, journals, total: batches * 20 };
}

/** Every file's bytes, by name. */
function contents(dir: string): Record<string, string> {
  return Object.fromEntries(fs.readdirSync(dir).sort().map((f) => [f, fs.readFileSync(path.join(dir, f)).toString('base64')]));
}

/** Offset of the second record of a journal file (records are [u32 length][u32 crc][body]). */
const secondRecord = (buf: Buffer) => 8 + buf.readUInt32LE(0);

describe('a corrupt journal file', () => {
  it.skipIf(skipIfExternal('embedded journal recovery'))('that is not the last stops start-up, naming the file and offset, and leaves every file as it was', async () => {
    const { dataDir, journals } = await severalJournals();
    expect(journals.length).toBeGreaterThanOrEqual(3);
    const middle = path.join(dataDir, journals[1]!);
    const buf = fs.readFileSync(middle);
    const at = secondRecord(buf);
    expect(buf.length).toBeGreaterThan(at + 20); // the file holds a second record to damage
    buf[at + 12] = buf[at + 12]! ^ 0xff; // a flipped byte in its body: the CRC no longer matches
    fs.writeFileSync(middle, buf);
    const before = contents(dataDir);

    const err = await startEmbeddedMongo({ dataDir }).then(
      (db) => db.close().then(() => undefined),
      (e: unknown) => e as Error,
    );
    expect(err).toBeInstanceOf(Error);
    expect(err!.message).toContain(middle);
    expect(err!.message).toContain(`byte ${at}`);
    expect(err!.message).toMatch(/restore/i);
    expect(err!.message).toContain('DB_REPAIR_TRUNCATE=true');
    expect(contents(dataDir)).toEqual(before);
  });

  it.skipIf(skipIfExternal('embedded journal recovery'))('that is not the last is cut at the damage, and the later files replayed, with repairTruncate', async () => {
    const { dataDir, journals, total } = await severalJournals();
    const middle = path.join(dataDir, journals[1]!);
    const buf = fs.readFileSync(middle);
    const at = secondRecord(buf);
    buf[at + 12] = buf[at + 12]! ^ 0xff;
    fs.writeFileSync(middle, buf);

    const logged = await withEngine(
      dataDir,
      async (conn) => {
        const ids = (await conn.collection('items').find({}, { projection: { _id: 1 } }).toArray()).map((d) => d._id as unknown as number);
        expect(ids.length).toBeLessThan(total); // what the damaged records held is gone
        expect(ids).toContain(total - 1); // what the later files hold is not
      },
      { repairTruncate: true },
    );
    expect(fs.statSync(middle).size).toBe(at);
    expect(logged.some((l) => l.msg.includes('truncated') && JSON.stringify(l.extra).includes(middle))).toBe(true);
  });

  it.skipIf(skipIfExternal('embedded journal recovery'))('whose damage is the torn tail of the last file (a crash mid-append) is truncated and start-up goes on', async () => {
    const { dataDir, journals, total } = await severalJournals();
    const last = path.join(dataDir, journals.at(-1)!);
    const size = fs.statSync(last).size;
    fs.appendFileSync(last, Buffer.from([200, 0, 0, 0, 1, 2, 3]));
    await withEngine(dataDir, async (conn) => {
      expect(await conn.collection('items').countDocuments()).toBe(total);
    });
    expect(fs.statSync(last).size).toBe(size);
  });
});
