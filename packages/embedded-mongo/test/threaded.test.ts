/**
 * The engine in a worker thread (startEmbeddedMongoInWorker): the same engine behind the same socket
 * and files, run off the caller's thread. Skipped (with a warning) when MONGODB_URI points elsewhere.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import mongoose from 'mongoose';
import { describe, expect, it } from 'vitest';
import { SocketListenError, startEmbeddedMongo, startEmbeddedMongoInWorker } from '../src/index';
import { skipIfExternal, tempDirs } from './helpers';

const tempDir = tempDirs('embedded-threaded-');

describe('the engine in a worker thread', () => {
  it.skipIf(skipIfExternal('worker thread of the embedded engine'))('serves the driver over its Unix socket alone, and keeps data across a restart', async () => {
    const dataDir = tempDir();
    const logged: string[] = [];
    const db = await startEmbeddedMongoInWorker({ dataDir, tcp: false, socketPath: true, logger: (msg) => logged.push(msg) });
    expect(db.port).toBeUndefined();
    expect(db.socketPath).toMatch(/engine\.sock$/);
    expect(fs.lstatSync(db.socketPath!).mode & 0o777).toBe(0o600);
    const conn = await mongoose.createConnection(db.uri, { dbName: 'threaded' }).asPromise();
    await conn.collection('items').insertMany([{ _id: 1, n: 'one' }, { _id: 2, n: 'two' }] as never[]);
    const session = await conn.startSession();
    await session.withTransaction(async () => {
      await conn.collection('items').insertOne({ _id: 3, n: 'three' } as never, { session });
    });
    await session.endSession();
    await conn.close();
    await db.close();
    expect(fs.existsSync(db.socketPath!)).toBe(false); // removed on close, as in-process
    expect(logged.length).toBeGreaterThan(0); // the worker's log lines reach the caller's logger

    // The in-process engine reads what the worker wrote: the same files, the same format.
    const again = await startEmbeddedMongo({ dataDir });
    const conn2 = await mongoose.createConnection(again.uri, { dbName: 'threaded' }).asPromise();
    expect(await conn2.collection('items').find().sort({ _id: 1 }).toArray()).toEqual([
      { _id: 1, n: 'one' },
      { _id: 2, n: 'two' },
      { _id: 3, n: 'three' },
    ]);
    await conn2.close();
    await again.close();
  });

  it.skipIf(skipIfExternal('worker thread of the embedded engine'))("sizes its own young generation, not the caller's --max-semi-space-size", () => {
    // The gateway runs with 64 MiB semi-spaces (npm start); V8 flags are process-wide and would give the
    // engine's isolate the same, resident once grown. V8 counts the young generation in heap_size_limit.
    const out = execFileSync(process.execPath, ['--max-semi-space-size=64', '--import', 'tsx', path.join(__dirname, 'fixtures/workerHeapLimits.ts')], { encoding: 'utf8' });
    const limits = JSON.parse(out.trim().split('\n').at(-1)!) as { main: number; engine: number; later: number };
    expect(limits.main - limits.engine).toBeGreaterThanOrEqual(2 * (64 - 16) * 2 ** 20);
    // The caller's flag is back for the isolates it starts afterwards.
    expect(limits.later).toBe(limits.main);
  });

  it.skipIf(skipIfExternal('worker thread of the embedded engine'))('fails its start with the error the in-process engine gives', async () => {
    const dataDir = tempDir();
    fs.writeFileSync(path.join(dataDir, 'snapshot.bson'), Buffer.from('not a snapshot at all'));
    const inProcess = await startEmbeddedMongo({ dataDir }).then(
      () => null,
      (e: Error) => e,
    );
    const threaded = await startEmbeddedMongoInWorker({ dataDir }).then(
      () => null,
      (e: Error) => e,
    );
    expect(inProcess?.message).toMatch(/corrupt/);
    expect(threaded?.message).toBe(inProcess?.message);

    // A socket it cannot listen on is a SocketListenError, as in-process (the gateway tells TMPDIR from other failures).
    const notADir = path.join(tempDir(), 'file');
    fs.writeFileSync(notADir, '');
    const socketErr = await startEmbeddedMongoInWorker({ tcp: false, socketPath: path.join(notADir, 'x.sock') }).then(
      () => null,
      (e: Error) => e,
    );
    expect(socketErr).toBeInstanceOf(SocketListenError);
    expect((socketErr as SocketListenError).code).toBe('ENOTDIR');
  });

  it("loads none of the engine on the caller's thread from '@pgw/embedded-mongo/threaded'", () => {
    // The gateway's launcher starts the worker through that entry: evaluating the engine's modules on its
    // own thread first (mingo's ~300 CommonJS files) would only delay the worker a restart waits for.
    const script = "await import('@pgw/embedded-mongo/threaded'); const { createRequire } = await import('node:module');" +
      ' console.log(JSON.stringify(Object.keys(createRequire(import.meta.url).cache)));';
    const loaded = JSON.parse(execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' })) as string[];
    expect(loaded.filter((file) => file.includes(`${path.sep}mingo${path.sep}`))).toEqual([]);
  });
});
