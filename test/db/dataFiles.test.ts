/**
 * What the engine keeps on disk and how it treats it at start-up: the data directory and its files are
 * owner-only (the engine has no authentication; file permissions are all that keeps other users out of
 * the data). Skipped (with a warning) when MONGODB_URI points elsewhere.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import mongoose from 'mongoose';
import { afterAll, describe, expect, it } from 'vitest';
import { startEmbeddedMongo, type EmbeddedMongoOptions } from '../../src/db/embedded';
import { skipIfExternal } from './helpers';

const dirs: string[] = [];
function tempDir(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'embedded-files-'));
  dirs.push(d);
  return d;
}
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

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
  it('creates the directory 0700 and every file it writes (journals, snapshot) 0600', async () => {
    if (skipIfExternal('embedded data directory permissions')) return;
    const dataDir = path.join(tempDir(), 'nested', 'data');
    await withEngine(dataDir, (conn) => writeBatches(conn, 5), { compactBytes: 4096 });
    const files = fs.readdirSync(dataDir).sort();
    expect(files).toContain('snapshot.bson');
    expect(files.some((f) => /^journal-\d+\.log$/.test(f))).toBe(true);
    expect(mode(dataDir)).toBe(0o700);
    expect(files.map((f) => [f, mode(path.join(dataDir, f))])).toEqual(files.map((f) => [f, 0o600]));
  });

  it('tightens a directory and files left open to others, and says so once', async () => {
    if (skipIfExternal('embedded data directory permissions')) return;
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
