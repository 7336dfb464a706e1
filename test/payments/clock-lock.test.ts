import mongoose from 'mongoose';
import { afterAll, beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest';
import { scheduleTimer } from '../../src/platform/timers/timerService';
import { clockLockSettings } from '../../src/domain/sandbox/sandboxClockService';
import { ClockLockModel } from '../../src/domain/sandbox/clockLockModel';
import { createAccount, startPaymentsServer } from './support/payments';
import type { TestServer } from '../support/server';

/**
 * Concurrent advances of one account's sandbox clock run one after the other (contract decisions:
 * never 429). The test plays "another gateway process" on the same database through a connection of
 * its own, writing the lock document (`sandbox_clock_locks`) the way a holder would.
 */
let server: TestServer;
let conn: mongoose.Connection;
const locks = () => conn.collection<{ _id: string; owner: string; lease_until: number }>('sandbox_clock_locks');

beforeAll(async () => {
  server = await startPaymentsServer();
  conn = await mongoose.createConnection(server.gateway.db.uri).asPromise();
});
afterAll(async () => {
  await conn?.close();
  await server?.stop();
});

/** A promise with its resolve function, for signals between the test and the gateway's code. */
function signal<T = void>() {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/** Resolves on the `n`-th attempt to take the account's lock over (a waiter found it held, n times). */
function watchTakeoverAttempts() {
  const original = ClockLockModel.findOneAndUpdate.bind(ClockLockModel);
  const waiters: Array<{ n: number; resolve: () => void }> = [];
  let count = 0;
  const spy = vi.spyOn(ClockLockModel, 'findOneAndUpdate').mockImplementation(((...args: Parameters<typeof original>) =>
    // Counted once the attempt has been answered (a held lock: null).
    original(...args).exec().then((result: unknown) => {
      count += 1;
      for (const w of waiters.filter((x) => x.n <= count)) w.resolve();
      return result;
    })) as unknown as typeof original);
  onTestFinished(() => spy.mockRestore());
  return (n: number) => new Promise<void>((resolve) => (count >= n ? resolve() : waiters.push({ n, resolve })));
}

describe('concurrent sandbox clock advances', () => {
  it('a second advance waits for a live holder however long it holds the lock, then runs (never 429)', async () => {
    const acct = await createAccount(server.baseUrl);
    // Another process is advancing this account: it holds the lock and keeps renewing its lease.
    await locks().insertOne({ _id: acct.id, owner: 'other-process', lease_until: Date.now() + 30_000 });
    const attempted = watchTakeoverAttempts();
    const realNow = Date.now.bind(Date);
    let skew = 0;
    const clock = vi.spyOn(Date, 'now').mockImplementation(() => realNow() + skew);
    onTestFinished(() => clock.mockRestore());

    const pending = acct.api.post('/sandbox/clock/advance', { seconds: 3600 });
    await attempted(1);
    // The other process is still at work 61 s later (it renewed its lease first): this waiter has now
    // waited longer than the wait that used to end in 429 rate_limit_exceeded.
    await locks().updateOne({ _id: acct.id }, { $set: { lease_until: realNow() + 61_000 + 30_000 } });
    skew = 61_000;
    await attempted(2);
    // The other process finishes and releases the lock.
    await locks().deleteOne({ _id: acct.id, owner: 'other-process' });

    const res = await pending;
    expect(res.status, res.text).toBe(200);
    expect(res.body.offset_seconds).toBe(3600);
    expect(await locks().findOne({ _id: acct.id })).toBeNull();
  });

  it('takes the lock over from a holder that died (its lease lapsed without renewal)', async () => {
    const acct = await createAccount(server.baseUrl);
    await locks().insertOne({ _id: acct.id, owner: 'dead-process', lease_until: Date.now() + 300 });
    const res = await acct.api.post('/sandbox/clock/advance', { seconds: 60 });
    expect(res.status, res.text).toBe(200);
    expect(res.body.offset_seconds).toBe(60);
    expect(await locks().findOne({ _id: acct.id })).toBeNull();
  });

  it('a running advance renews its lease past its length; concurrent ones run after it, each on the clock the previous left', async () => {
    const saved = { ...clockLockSettings };
    Object.assign(clockLockSettings, { leaseMs: 400, renewEveryMs: 100 });
    onTestFinished(() => void Object.assign(clockLockSettings, saved));

    const acct = await createAccount(server.baseUrl);
    const started = signal();
    const gate = signal();
    const kind = `test.clock_block.${acct.id}`;
    onTestFinished(() => gate.resolve());
    server.gateway.runtime.timers.register(kind, async () => {
      started.resolve();
      await gate.promise;
    });
    // Due inside the first advance's span: that advance holds the lock while the handler blocks.
    await scheduleTimer({ accountId: acct.id, kind, refId: acct.id, dueAt: new Date(Date.now() + 50_000) });

    const settled: number[] = [];
    const advances = [60, 60, 60].map((seconds, i) =>
      acct.api.post('/sandbox/clock/advance', { seconds }).then((res) => {
        settled.push(i);
        return res;
      }),
    );
    await started.promise;
    const holder = await locks().findOne({ _id: acct.id });
    expect(holder).not.toBeNull();

    // Another process tries to take the lock over for three lease lengths: the holder keeps renewing.
    const until = Date.now() + 3 * clockLockSettings.leaseMs;
    while (Date.now() < until) {
      const taken = await locks().findOneAndUpdate({ _id: acct.id, lease_until: { $lte: Date.now() } }, { $set: { owner: 'thief', lease_until: Date.now() + 60_000 } });
      expect(taken).toBeNull();
      // Not a wait for something: the thief tries again and again over the whole span, which is the test.
      await new Promise((r) => setTimeout(r, 50));
    }
    expect((await locks().findOne({ _id: acct.id }))?.owner).toBe(holder!.owner);
    expect(settled).toEqual([]);

    gate.resolve();
    const answers = await Promise.all(advances);
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(answers.map((r) => r.body.offset_seconds).sort((x, y) => x - y)).toEqual([60, 120, 180]);
    expect((await acct.api.get('/sandbox/clock')).body.offset_seconds).toBe(180);
    expect(await locks().findOne({ _id: acct.id })).toBeNull();
  });
});
