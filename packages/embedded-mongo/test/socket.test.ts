/**
 * The engine's Unix domain socket listener (beside TCP, or alone with tcp: false): mongoose
 * CRUD, a transaction and a change stream over the socket, both connection-string forms, and
 * the socket file's life cycle. Skipped (with a warning) when MONGODB_URI points elsewhere.
 * The whole conformance suite can also be run over the socket: EMBEDDED_DB_TRANSPORT=socket.
 */
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import mongoose from 'mongoose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedMongo, type EmbeddedMongo } from '../src/index';
import { EXTERNAL_URI, skipIfExternal } from './helpers';

interface PaymentDoc {
  ref: string;
  status: string;
  amount: number;
}
const schema = new mongoose.Schema<PaymentDoc>({ ref: { type: String, unique: true }, status: String, amount: Number });

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'embedded-socket-'));
let db: EmbeddedMongo | undefined;
let conn: mongoose.Connection;
let Payment: mongoose.Model<PaymentDoc>;
beforeAll(async () => {
  if (EXTERNAL_URI) return;
  db = await startEmbeddedMongo({ socketPath: path.join(tmp, 'engine.sock') });
  conn = await mongoose.createConnection(db.socketUri!, { dbName: 'socket' }).asPromise();
  Payment = conn.model<PaymentDoc>('Payment', schema);
  await Payment.init();
});
afterAll(async () => {
  await conn?.close();
  await db?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

describe('Unix domain socket listener', () => {
  it.skipIf(skipIfExternal('Unix socket listener of the embedded engine'))('serves mongoose CRUD over the socket while TCP serves the same data', async () => {
    expect(db!.socketUri).toBe(`mongodb://${encodeURIComponent(path.join(tmp, 'engine.sock'))}/?directConnection=true`);
    expect(fs.lstatSync(db!.socketPath!).isSocket()).toBe(true);
    expect(fs.lstatSync(db!.socketPath!).mode & 0o777).toBe(0o600); // owner only
    const p = await Payment.create({ ref: 'S1', status: 'new', amount: 10 });
    expect((await Payment.findById(p._id).lean())?.ref).toBe('S1');
    expect((await Payment.findOneAndUpdate({ ref: 'S1' }, { $inc: { amount: 5 } }, { returnDocument: 'after' }))?.amount).toBe(15);
    const dup = await Payment.create({ ref: 'S1', status: 'dup', amount: 1 }).catch((e: unknown) => e);
    expect((dup as { code?: number }).code).toBe(11000);
    await Payment.deleteOne({ ref: 'S1' });
    await Payment.create({ ref: 'S2', status: 'new', amount: 1 });
    const tcp = await mongoose.createConnection(db!.uri, { dbName: 'socket' }).asPromise();
    expect((await tcp.collection('payments').find().toArray()).map((d) => d.ref)).toEqual(['S2']);
    await tcp.close();
  });

  it.skipIf(skipIfExternal('Unix socket listener of the embedded engine'))('commits and aborts transactions over the socket', async () => {
    await conn.transaction(async (session) => {
      await Payment.create([{ ref: 'T1', status: 'new', amount: 1 }], { session });
      await Payment.updateOne({ ref: 'T1' }, { $set: { status: 'paid' } }, { session });
    });
    expect((await Payment.findOne({ ref: 'T1' }).lean())?.status).toBe('paid');
    const session = await conn.startSession();
    session.startTransaction();
    await Payment.create([{ ref: 'T2', status: 'new', amount: 1 }], { session });
    await session.abortTransaction();
    await session.endSession();
    expect(await Payment.countDocuments({ ref: 'T2' })).toBe(0);
  });

  it.skipIf(skipIfExternal('Unix socket listener of the embedded engine'))('delivers change stream events over the socket', async () => {
    const stream = Payment.collection.watch([], { fullDocument: 'updateLookup' });
    await stream.tryNext(); // the server-side cursor exists from here on
    await Payment.create({ ref: 'C1', status: 'new', amount: 3 });
    await conn.transaction(async (session) => {
      await Payment.updateOne({ ref: 'C1' }, { $set: { status: 'paid' } }, { session });
    });
    const ins = await stream.next();
    const upd = await stream.next();
    await stream.close();
    expect(ins.operationType).toBe('insert');
    expect(upd.operationType === 'update' && upd.fullDocument?.status).toBe('paid');
  });

  it.skipIf(skipIfExternal('Unix socket listener of the embedded engine'))('advertises the socket path in hello to socket clients, so replicaSet=rs0 URIs work too', async () => {
    const hello = await conn.db!.admin().command({ hello: 1 });
    expect(hello.me).toBe(db!.socketPath);
    expect(hello.hosts).toEqual([db!.socketPath]);
    // The driver lower-cases the addresses it reads from hello, so the replicaSet form needs an
    // all-lowercase socket path (socketPath: true makes one; mkdtemp's above is mixed case).
    const lower = await startEmbeddedMongo({ socketPath: true });
    const rs = await mongoose.createConnection(lower.socketUri!.replace('directConnection=true', 'replicaSet=rs0'), { dbName: 'socket' }).asPromise();
    await rs.transaction(async (session) => {
      await rs.collection('payments').insertOne({ ref: 'R1' }, { session });
    });
    expect(await rs.collection('payments').countDocuments({ ref: 'R1' })).toBe(1);
    await rs.close();
    await lower.close();
    const tcp = await mongoose.createConnection(db!.uri, { dbName: 'socket' }).asPromise();
    expect((await tcp.db!.admin().command({ hello: 1 })).me).toMatch(/^127\.0\.0\.1:\d+$/);
    await tcp.close();
  });
});

describe('socket file life cycle', () => {
  it.skipIf(skipIfExternal('Unix socket listener of the embedded engine'))('creates a socket (0600) in a fresh private directory (0700) of the temp directory with socketPath: true, and removes both on close', async () => {
    const a = await startEmbeddedMongo({ socketPath: true });
    const b = await startEmbeddedMongo({ socketPath: true });
    for (const db of [a, b]) {
      expect(path.dirname(path.dirname(db.socketPath!))).toBe(os.tmpdir());
      expect(fs.lstatSync(path.dirname(db.socketPath!)).mode & 0o777).toBe(0o700);
      expect(fs.lstatSync(db.socketPath!).mode & 0o777).toBe(0o600);
    }
    expect(a.socketPath).toMatch(/\.sock$/);
    expect(path.dirname(a.socketPath!)).not.toBe(path.dirname(b.socketPath!));
    await a.close();
    await b.close();
    for (const db of [a, b]) expect(fs.existsSync(path.dirname(db.socketPath!))).toBe(false);
  });

  it.skipIf(skipIfExternal('Unix socket listener of the embedded engine'))('listens on the socket alone with tcp: false (no port, the URI is the socket\'s)', async () => {
    await expect(startEmbeddedMongo({ tcp: false })).rejects.toThrow(/socketPath/);
    const db = await startEmbeddedMongo({ tcp: false, socketPath: true });
    expect(db.port).toBeUndefined();
    expect(db.uri).toBe(db.socketUri);
    const c = await mongoose.createConnection(db.uri.replace('directConnection=true', 'replicaSet=rs0')).asPromise();
    const hello = await c.db!.admin().command({ hello: 1 });
    expect([hello.me, hello.primary]).toEqual([db.socketPath, db.socketPath]);
    await c.close();
    await db.close();
  });

  it.skipIf(skipIfExternal('Unix socket listener of the embedded engine'))('replaces a stale socket file but refuses one a live server listens on', async () => {
    const socketPath = path.join(tmp, 'stale.sock');
    // A socket file left behind by a process that died without closing it.
    const stale = net.createServer().listen(socketPath);
    await new Promise((r) => stale.once('listening', r));
    const leftover = `${socketPath}.keep`;
    fs.linkSync(socketPath, leftover);
    await new Promise((r) => stale.close(r)); // unlinks socketPath; the hard link keeps a dead socket file
    fs.renameSync(leftover, socketPath);
    expect(fs.lstatSync(socketPath).isSocket()).toBe(true);

    const first = await startEmbeddedMongo({ socketPath });
    const c = await mongoose.createConnection(first.socketUri!).asPromise();
    expect((await c.db!.admin().ping()).ok).toBe(1);
    await c.close();
    const clash = await startEmbeddedMongo({ socketPath }).catch((e: unknown) => e);
    expect((clash as NodeJS.ErrnoException).code).toBe('EADDRINUSE');
    expect(fs.lstatSync(socketPath).isSocket()).toBe(true); // the live server's file is untouched
    await first.close();
    expect(fs.existsSync(socketPath)).toBe(false);
  });

  it.skipIf(skipIfExternal('Unix socket listener of the embedded engine'))('rejects a socket path the driver would not recognise and never deletes a regular file', async () => {
    await expect(startEmbeddedMongo({ socketPath: path.join(tmp, 'engine.socket') })).rejects.toThrow(/\.sock/);
    const file = path.join(tmp, 'file.sock');
    fs.writeFileSync(file, 'not a socket');
    await expect(startEmbeddedMongo({ socketPath: file })).rejects.toThrow(/not a socket/);
    expect(fs.readFileSync(file, 'utf8')).toBe('not a socket');
  });
});
