import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { MongoClient } from 'mongodb';
import mongoose from 'mongoose';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { startEmbeddedMongo, type EmbeddedMongo } from '@pgw/embedded-mongo';
import { createEventHooks, statusChangeId, type StatusChange } from '../../src/domain/events/eventHooks';
import { EventModel } from '../../src/domain/events/eventModel';
import { PaymentModel } from '../../src/domain/payments/paymentModel';
import { newId } from '../../src/ids';
import { logger } from '../../src/logger';
import { busStats, startEventBus, statusChangesReady, stopEventBus, subscribe, subscribeStatusChanges } from '../../src/realtime/eventBus';
import { connectUpstream } from '../support/holdingProxy';
import { waitFor } from '../support/wait';

/**
 * The event bus across database outages longer than the driver's server selection, when its change
 * stream has failed for good: reopened from its resume token when the database still has that point
 * of its history (a network cut, a replica set's restart), and from now with the gap read from the
 * collections when it does not (the embedded engine restarted: its change history lives in memory).
 * Either way every other process's event written meanwhile reaches the subscribers once, and so does
 * a status change without an event. The gateway's connection goes through a proxy that the tests cut;
 * "another process" writes straight to the engine.
 */
const SELECTION_MS = 400;
/** No gateway here: the bus is fed by hooks of its own, which store nothing in this file. */
const hooks = createEventHooks();

/** A TCP proxy to the engine that can be cut (listener closed, connections dropped) and restored. */
class CuttableProxy {
  private server: net.Server | null = null;
  private readonly sockets = new Set<net.Socket>();
  private cutOff = false;
  port = 0;
  constructor(public targetPort: number) {}

  async up(): Promise<void> {
    this.cutOff = false;
    const server = net.createServer((client) => {
      if (this.cutOff) return client.destroy();
      const upstream = connectUpstream(client, this.targetPort, this.sockets);
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    this.port = (server.address() as net.AddressInfo).port;
    this.server = server;
  }

  /**
   * Stops listening and resets every connection, as a crashed host's do (not waiting for the close
   * callback, which waits for them all).
   */
  down(): void {
    this.cutOff = true;
    this.server?.close();
    this.server = null;
    for (const s of this.sockets) s.resetAndDestroy();
  }
}

let dataDir: string;
let engine: EmbeddedMongo;
let proxy: CuttableProxy;
/** Another gateway process's connection, straight to the engine. */
let elsewhere: MongoClient;

async function connectElsewhere(): Promise<void> {
  await elsewhere?.close();
  elsewhere = new MongoClient(engine.uri);
  await elsewhere.connect();
}

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'pgw-bus-recovery-'));
  engine = await startEmbeddedMongo({ port: 0, dataDir });
  proxy = new CuttableProxy(engine.port!);
  await proxy.up();
  await mongoose.connect(`mongodb://127.0.0.1:${proxy.port}/pgw?directConnection=true`, {
    serverSelectionTimeoutMS: SELECTION_MS,
  });
  await Promise.all(Object.values(mongoose.models).map((m) => m.init()));
  await connectElsewhere();
});

afterAll(async () => {
  await stopEventBus();
  await mongoose.disconnect();
  await elsewhere?.close();
  proxy?.down();
  await engine?.close();
  await rm(dataDir, { recursive: true, force: true });
});

afterEach(async () => {
  await stopEventBus();
});

const db = () => elsewhere.db(mongoose.connection.db!.databaseName);

/** Stores an event as another gateway process does (its own origin, the next seq unless given). */
async function storeElsewhere(accountId: string, seq?: number): Promise<string> {
  const id = newId('evt');
  const next = seq ?? (await db().collection<{ _id: string; value: number }>('sequences').findOneAndUpdate({ _id: 'events' }, { $inc: { value: 1 } }, { upsert: true, returnDocument: 'after' }))!.value;
  await db().collection('events').insertOne({
    _id: id as never, account_id: accountId, type: 'test.ping', data_json: '{"message":"elsewhere"}', created_at: new Date(), seq: next,
    payment_id: null, livemode: false, hooks_done: true, hooks_lease_until: 0, stored_at: Date.now(), origin: 'host:2:elsewhere',
  });
  return id;
}

async function insertPayment(accountId: string): Promise<string> {
  const id = newId('pay');
  const now = new Date();
  await db().collection(PaymentModel.collection.collectionName).insertOne({
    _id: id as never, account_id: accountId, seq: 1, amount: 5000, currency: 'AOA', payment_method: 'multicaixa_express', status: 'PENDING',
    customer: { mobile: '923000000' }, created_at: now, updated_at: now, version: 0,
  });
  return id;
}

/** Another process's rail write: PENDING → PROCESSING, which no event announces. */
async function processElsewhere(paymentId: string): Promise<Date> {
  const updatedAt = new Date();
  await db().collection(PaymentModel.collection.collectionName).updateOne({ _id: paymentId as never }, { $set: { status: 'PROCESSING', updated_at: updatedAt }, $inc: { version: 1 } });
  return updatedAt;
}

/**
 * Cuts the gateway's connection until the driver has given its change streams up: the bus says so itself,
 * for each stream (`events`, and `payments` for the status changes followed), when it starts reopening
 * one (realtime/bus/changeStream.ts, watchCollection). That report is the signal waited for; the outage goes on until
 * `proxy.up()`.
 */
async function cut(): Promise<void> {
  const lost = new Set<string>();
  const warn = vi.spyOn(logger, 'warn').mockImplementation(((fields: { collection?: string }, message: string) => {
    if (typeof message === 'string' && message.startsWith('event bus change stream lost') && fields.collection) lost.add(fields.collection);
  }) as never);
  try {
    proxy.down();
    const streams = [EventModel.collection.collectionName, PaymentModel.collection.collectionName];
    await waitFor(async () => [...lost].sort(), (got) => streams.every((s) => got.includes(s)), 30_000, 20);
  } finally {
    warn.mockRestore();
  }
}

/**
 * The bus started, an account's events and one payment's status changes followed, and one event of
 * another process delivered before the outage; `finish` checks what arrived after it.
 */
async function following(acct: string) {
  expect(await startEventBus({ hooks, mode: 'change_stream' })).toBe('change_stream');
  const got: string[] = [];
  const unsub = subscribe({ accountId: acct }, (e) => got.push(e.id));
  const pay = await insertPayment(acct);
  const changes: StatusChange[] = [];
  const unsubStatus = subscribeStatusChanges(pay, (c) => changes.push(c));
  await statusChangesReady();
  const before = await storeElsewhere(acct);
  await waitFor(async () => got.length, (n) => n === 1);
  return {
    pay,
    /** Every event once and in order (`during` the outage, then two after), and the status change once. */
    async finish(during: string[], processingAt: Date) {
      await waitFor(async () => got.length, (n) => n >= 1 + during.length, 15_000);
      await waitFor(async () => changes.length, (n) => n >= 1, 15_000);
      const after = await storeElsewhere(acct);
      await waitFor(async () => got.includes(after), Boolean, 15_000);
      // A last one through the same stream: anything doubled would have come before it.
      const last = await storeElsewhere(acct);
      await waitFor(async () => got.includes(last), Boolean, 15_000);
      expect(got).toEqual([before, ...during, after, last]);
      expect(changes).toEqual([{ id: statusChangeId(pay, 'PROCESSING', processingAt), paymentId: pay, status: 'PROCESSING', intent: null }]);
      expect(busStats().mode).toBe('change_stream');
      unsub();
      unsubStatus();
    },
  };
}

describe('event bus recovery after the database was away', () => {
  it('reopens from its resume token when the database kept its history: nothing lost, nothing twice', async () => {
    const acct = 'acct_recovery_token';
    const bus = await following(acct);
    await cut();
    // Written while this process cannot see the database. One with a seq far below everything (as if
    // allocated long ago): only the resume token, not a replay by seq, can find it.
    const during = [await storeElsewhere(acct), await storeElsewhere(acct, 1)];
    const processingAt = await processElsewhere(bus.pay);
    await proxy.up();
    await bus.finish(during, processingAt);
  });

  it('reopens from now and replays the gap from the collections when the database restarted without its history', async () => {
    const acct = 'acct_recovery_restart';
    const bus = await following(acct);
    // The engine restarts on its data directory: a new change history, which the old tokens are not in.
    await cut();
    await elsewhere.close();
    await engine.close();
    engine = await startEmbeddedMongo({ port: 0, dataDir });
    proxy.targetPort = engine.port!;
    await connectElsewhere();
    const during = [await storeElsewhere(acct), await storeElsewhere(acct)];
    const processingAt = await processElsewhere(bus.pay);
    await proxy.up();
    await bus.finish(during, processingAt);
  });
});
