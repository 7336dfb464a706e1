/**
 * Behaviour specific to the embedded engine: its CLI, its options (transaction lifetime) and
 * the replicaSet form of its URI. Skipped (with a warning) when MONGODB_URI points elsewhere.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import mongoose from 'mongoose';
import { afterAll, describe, expect, it } from 'vitest';
import { startEmbeddedMongo } from '../src/index';
import { errorCode, skipIfExternal } from './helpers';

const root = path.resolve(__dirname, '..');
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

/** Resolves once the URI lines are printed (MONGODB_URI, plus MONGODB_SOCKET_URI with DB_SOCKET). */
function startCli(env: Record<string, string>, args: string[] = []): Promise<{ child: ChildProcess; uri: string; socketUri?: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'src/cli.ts'), ...args], {
    cwd: root,
    env: { ...process.env, DB_PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stderr!.resume();
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', (code) => reject(new Error(`cli exited with ${code}`)));
    let uri: string | undefined;
    readline.createInterface({ input: child.stdout! }).on('line', (line) => {
      const m = /^MONGODB_(SOCKET_)?URI=(.+)$/.exec(line);
      if (!m) return;
      if (!m[1]) uri = m[2]!;
      if (m[1] || !env.DB_SOCKET) resolve({ child, uri: uri!, socketUri: m[1] ? m[2] : undefined });
    });
  });
}

function stopCli(child: ChildProcess, signal: NodeJS.Signals): Promise<number | null> {
  child.removeAllListeners('exit');
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  child.kill(signal);
  return exited;
}

describe('standalone CLI', () => {
  it.skipIf(skipIfExternal('embedded CLI'))('prints MONGODB_URI, serves several clients, stops on SIGTERM and keeps data in DATA_DIR', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'embedded-cli-'));
    dirs.push(dataDir);
    const first = await startCli({ DATA_DIR: dataDir });
    expect(first.uri).toMatch(/^mongodb:\/\/127\.0\.0\.1:\d+\/\?/);
    // Two independent clients (as two gateway processes would be) share the engine.
    const a = await mongoose.createConnection(first.uri, { dbName: 'cli' }).asPromise();
    const b = await mongoose.createConnection(first.uri, { dbName: 'cli' }).asPromise();
    await a.collection('x').insertOne({ from: 'a' });
    await b.collection('x').insertOne({ from: 'b' });
    expect(await a.collection('x').countDocuments()).toBe(2);
    await a.close();
    await b.close();
    expect(await stopCli(first.child, 'SIGTERM')).toBe(0);

    const second = await startCli({ DATA_DIR: dataDir });
    const c = await mongoose.createConnection(second.uri, { dbName: 'cli' }).asPromise();
    expect((await c.collection('x').find().sort({ from: 1 }).toArray()).map((d) => d.from)).toEqual(['a', 'b']);
    await c.close();
    expect(await stopCli(second.child, 'SIGINT')).toBe(0);
  });

  it.skipIf(skipIfExternal('embedded CLI --memory'))('runs memory-only with --memory, and also on a Unix socket with DB_SOCKET', async () => {
    const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'embedded-cli-mem-'));
    dirs.push(cwd);
    const socketPath = path.join(cwd, 'db.sock');
    const { child, uri, socketUri } = await startCli({ DATA_DIR: path.join(cwd, 'data'), DB_SOCKET: socketPath }, ['--memory']);
    expect(socketUri).toBe(`mongodb://${encodeURIComponent(socketPath)}/?directConnection=true`);
    const c = await mongoose.createConnection(uri, { dbName: 'cli' }).asPromise();
    const overSocket = await mongoose.createConnection(socketUri!, { dbName: 'cli' }).asPromise();
    await c.collection('x').insertOne({ a: 1 });
    expect(await overSocket.collection('x').countDocuments()).toBe(1);
    await c.close();
    await overSocket.close();
    expect(await stopCli(child, 'SIGTERM')).toBe(0);
    expect(fs.existsSync(path.join(cwd, 'data'))).toBe(false);
    expect(fs.existsSync(socketPath)).toBe(false);
  });
});

/** Runs the CLI to its exit (one that refuses to start); resolves with its code and stderr. */
function runCliToExit(env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'src/cli.ts'), '--memory'], {
    cwd: root,
    env: { ...process.env, DB_PORT: '0', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  // Bounds a CLI that does start (and would serve for ever): killed, it reports code null.
  const hang = setTimeout(() => child.kill('SIGKILL'), 30_000);
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(hang);
      resolve({ code, stderr });
    });
  });
}

describe('standalone CLI: who may connect', () => {
  it.skipIf(skipIfExternal('embedded CLI bind policy'))('refuses a DB_HOST that is not loopback with one line and exit code 2', async () => {
    for (const host of ['0.0.0.0', '::', '192.168.1.10', '']) {
      const { code, stderr } = await runCliToExit({ DB_HOST: host });
      expect([host, code]).toEqual([host, 2]);
      const lines = stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain(`refusing to listen on DB_HOST=${host}`);
      expect(lines[0]).toContain('DB_ALLOW_REMOTE=true');
    }
  });

  it.skipIf(skipIfExternal('embedded CLI bind policy'))('binds a loopback DB_HOST, and any address with DB_ALLOW_REMOTE=true', async () => {
    const envs: Array<Record<string, string>> = [{ DB_HOST: '127.0.0.2' }, { DB_HOST: 'localhost' }, { DB_HOST: '0.0.0.0', DB_ALLOW_REMOTE: 'true' }];
    for (const env of envs) {
      const { child, uri } = await startCli({ ...env, DATA_DIR: '' });
      const c = await mongoose.createConnection(uri, { dbName: 'bind' }).asPromise();
      expect((await c.db!.admin().ping()).ok).toBe(1);
      await c.close();
      expect(await stopCli(child, 'SIGTERM')).toBe(0);
    }
  });
});

describe('engine options', () => {
  it.skipIf(skipIfExternal('transaction lifetime option'))('aborts a transaction left open longer than transactionLifetimeMs, unblocking others', async () => {
    const db = await startEmbeddedMongo({ transactionLifetimeMs: 300 });
    const conn = await mongoose.createConnection(db.uri, { dbName: 'ttl' }).asPromise();
    const coll = conn.collection('t');
    const stale = await conn.startSession();
    stale.startTransaction();
    await coll.insertOne({ _id: 'stale' as never }, { session: stale });
    // A second transaction's first write queues behind the stale one until it is aborted.
    const other = await conn.startSession();
    await other.withTransaction(async () => {
      await coll.insertOne({ _id: 'other' as never }, { session: other });
    });
    const commit = await stale.commitTransaction().catch((e: unknown) => e);
    expect(errorCode(commit)).toBe(251);
    await stale.endSession();
    await other.endSession();
    expect((await coll.find().toArray()).map((d) => d._id)).toEqual(['other']);
    await conn.close();
    await db.close();
  });

  it.skipIf(skipIfExternal('orphaned transaction of a killed client'))("aborts the transaction of a client that dies mid-transaction, so others don't wait", async () => {
    // A lifetime far beyond the test timeout: only the disconnect handling can free the lock.
    const db = await startEmbeddedMongo({ transactionLifetimeMs: 10 * 60_000 });
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(__dirname, 'fixtures/txnHolder.ts')], {
      cwd: root,
      env: { ...process.env, ENGINE_URI: db.uri },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    await new Promise<void>((resolve, reject) => {
      child.on('error', reject);
      readline.createInterface({ input: child.stdout! }).on('line', (l) => l === 'IN_TXN' && resolve());
    });
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await exited;
    const conn = await mongoose.createConnection(db.uri, { dbName: 'orphans' }).asPromise();
    await conn.transaction(async (session) => {
      await conn.collection('docs').insertOne({ _id: 'after' as never }, { session });
    });
    expect((await conn.collection('docs').find().toArray()).map((d) => d._id)).toEqual(['after']);
    await conn.close();
    await db.close();
  });

  it.skipIf(skipIfExternal('replicaSet URI of the embedded engine'))('also works with a replicaSet=rs0 connection string', async () => {
    const db = await startEmbeddedMongo();
    const uri = db.uri.replace('directConnection=true', 'replicaSet=rs0');
    const conn = await mongoose.createConnection(uri, { dbName: 'rs' }).asPromise();
    await conn.transaction(async (session) => {
      await conn.collection('x').insertOne({ a: 1 }, { session });
    });
    expect(await conn.collection('x').countDocuments()).toBe(1);
    await conn.close();
    await db.close();
  });
});
