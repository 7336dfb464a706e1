/**
 * Shared set-up for the database conformance suite. Each test file starts its own in-memory
 * engine on an ephemeral port, unless MONGODB_URI is set: then every file runs against that
 * server instead (in its own randomly named database), so the same assertions check the
 * embedded engine against a real MongoDB replica set. EMBEDDED_DB_TRANSPORT=socket runs the
 * embedded engine's files over its Unix domain socket instead of TCP.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import mongoose from 'mongoose';
import { afterAll } from 'vitest';
import { startEmbeddedMongo } from '../src/index';

export interface TestDb {
  uri: string;
  /** True when running against MONGODB_URI instead of the embedded engine. */
  external: boolean;
  dbName: string;
  conn: mongoose.Connection;
  close(): Promise<void>;
}

export const EXTERNAL_URI = process.env.MONGODB_URI || undefined;
const OVER_SOCKET = process.env.EMBEDDED_DB_TRANSPORT === 'socket';

export async function startTestDb(prefix: string): Promise<TestDb> {
  const dbName = `${prefix}_${Math.random().toString(36).slice(2, 10)}`;
  const engine = EXTERNAL_URI ? undefined : await startEmbeddedMongo(OVER_SOCKET ? { socketPath: true } : {});
  const uri = EXTERNAL_URI ?? (OVER_SOCKET ? engine!.socketUri! : engine!.uri);
  const conn = await mongoose.createConnection(uri, { dbName, autoIndex: true }).asPromise();
  return {
    uri,
    external: engine === undefined,
    dbName,
    conn,
    async close() {
      if (!engine) await conn.dropDatabase().catch(() => {});
      await conn.close();
      await engine?.close();
    },
  };
}

/**
 * For tests that only make sense against the embedded engine (raw wire abuse, kill -9 of the
 * engine process): `it.skipIf(skipIfExternal("what"))(...)`. Returns true, and warns loudly while the file
 * is collected, when they must be skipped, so a skipped test reports as skipped, never as passed.
 */
export function skipIfExternal(what: string): boolean {
  if (!EXTERNAL_URI) return false;
  console.warn(
    `\n!!! SKIPPED: "${what}" is specific to the embedded engine and cannot run against MONGODB_URI=${EXTERNAL_URI}\n`,
  );
  return true;
}

export function errorCode(e: unknown): number | undefined {
  return (e as { code?: number } | null)?.code;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A maker of fresh directories under os.tmpdir() named `<prefix>…`, all removed once the file's tests
 * are done. Call it at a test file's top level (it registers the afterAll).
 */
export function tempDirs(prefix: string): () => string {
  const made: string[] = [];
  afterAll(() => {
    for (const d of made) fs.rmSync(d, { recursive: true, force: true });
  });
  return () => {
    const d = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
    made.push(d);
    return d;
  };
}
