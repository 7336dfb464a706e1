import { describe, expect, it } from 'vitest';
import { FairScheduler, type AttemptJob } from '../../../src/domain/webhooks/fairScheduler';

/** Jobs that run until released by the test, recording the order in which they started. */
function harness(limits = { total: 4, perAccount: 2, backlogPerAccount: 5, backlogTotal: 100 }) {
  const scheduler = new FairScheduler(limits);
  const started: string[] = [];
  const release = new Map<string, () => void>();
  let n = 0;
  const job = (accountId: string, endpointId = 'e1', key = `k${++n}`): AttemptJob => {
    const id = `${accountId}/${endpointId}/${key}#${++n}`;
    return {
      id,
      accountId,
      endpointId,
      key: `${endpointId}:${key}`,
      host: 'h', cost: 1, run: () =>
        new Promise<void>((resolve) => {
          started.push(id);
          release.set(id, resolve);
        }),
    };
  };
  const finish = async (id: string) => {
    release.get(id)!();
    await new Promise((r) => setImmediate(r));
  };
  return { scheduler, started, job, finish };
}

describe('FairScheduler', () => {
  it('takes accounts in turn and holds each to its in-flight limit', () => {
    const { scheduler, started, job } = harness();
    for (let i = 0; i < 5; i++) scheduler.submit(job('hog'));
    scheduler.submit(job('other'));
    // Two for the hog (its limit), then the other account's, although it came last.
    expect(started.map((s) => s.split('/')[0])).toEqual(['hog', 'hog', 'other']);
    expect(scheduler.inFlight).toBe(3);
  });

  it('takes endpoints of one account in turn', async () => {
    const { scheduler, started, job, finish } = harness({ total: 1, perAccount: 1, backlogPerAccount: 10, backlogTotal: 10 });
    const slow = [job('a', 'slow'), job('a', 'slow'), job('a', 'slow')];
    const fast = job('a', 'fast');
    for (const j of [...slow, fast]) scheduler.submit(j);
    await finish(slow[0]!.id);
    await finish(slow[1]!.id);
    // The fast endpoint's job did not wait for every job of the slow one.
    expect(started).toEqual([slow[0]!.id, slow[1]!.id, fast.id]);
  });

  it('runs jobs that share a key one at a time, in order, while other keys go ahead', async () => {
    const { scheduler, started, job, finish } = harness();
    const a1 = job('a', 'e1', 'pay1');
    const a2 = job('a', 'e1', 'pay1');
    const b = job('a', 'e1', 'pay2');
    for (const j of [a1, a2, b]) scheduler.submit(j);
    expect(started).toEqual([a1.id, b.id]);
    await finish(a1.id);
    expect(started).toEqual([a1.id, b.id, a2.id]);
  });

  it("refuses what does not fit in the account's backlog, and a delivery already held", () => {
    const { scheduler, job } = harness({ total: 1, perAccount: 1, backlogPerAccount: 2, backlogTotal: 100 });
    const running = job('a');
    expect(scheduler.submit(running)).not.toBeNull();
    expect(scheduler.submit(job('a'))).not.toBeNull();
    expect(scheduler.submit(job('a'))).not.toBeNull();
    expect(scheduler.submit(job('a'))).toBeNull(); // two waiting: full
    expect(scheduler.submit(running)).toBeNull(); // already here
    expect(scheduler.holds(running.id)).toBe(true);
    expect(scheduler.fullAccounts()).toEqual(['a']);
    expect(scheduler.submit(job('b'))).not.toBeNull(); // another account still fits
    expect(scheduler.hasRoom('b', 1)).toBe(false); // a narrower limit for this submission
  });

  it('settles with the job, and a failing job frees its place', async () => {
    const scheduler = new FairScheduler({ total: 1, perAccount: 1, backlogPerAccount: 5, backlogTotal: 5 });
    const failing = scheduler.submit({ id: 'x', accountId: 'a', endpointId: 'e', key: 'k', host: 'h', cost: 1, run: () => Promise.reject(new Error('boom')) });
    const next = scheduler.submit({ id: 'y', accountId: 'a', endpointId: 'e', key: 'k', host: 'h', cost: 1, run: () => Promise.resolve() });
    await expect(failing).rejects.toThrow('boom');
    await expect(next).resolves.toBeUndefined();
    await scheduler.idle();
    expect(scheduler.inFlight + scheduler.queued).toBe(0);
  });
});

describe('FairScheduler: what a job hands back', () => {
  it('runs after the slot is freed: the next job starts while it runs, and the job settles (and idle resolves) only when it is done', async () => {
    const scheduler = new FairScheduler({ total: 1, perAccount: 1, backlogPerAccount: 5, backlogTotal: 5 });
    const order: string[] = [];
    let finishRecording!: () => void;
    const recorded = new Promise<void>((r) => (finishRecording = r));
    const first = scheduler.submit({
      id: 'd1',
      accountId: 'a',
      endpointId: 'e',
      key: 'e:p1',
      host: 'h', cost: 1, run: async () => {
        order.push('request 1');
        return async () => {
          order.push('recording 1');
          await recorded;
          order.push('recorded 1');
        };
      },
    })!;
    let firstSettled = false;
    void first.then(() => (firstSettled = true));
    const second = scheduler.submit({ id: 'd2', accountId: 'a', endpointId: 'e', key: 'e:p1', host: 'h', cost: 1, run: async () => void order.push('request 2') })!;
    await second;
    // The second request (same account, same ordering key, one slot) did not wait for the first's recording.
    expect(order).toEqual(['request 1', 'request 2', 'recording 1']);
    expect(firstSettled).toBe(false);
    expect(scheduler.holds('d1')).toBe(true);
    let idle = false;
    void scheduler.idle().then(() => (idle = true));
    await new Promise((r) => setImmediate(r));
    expect(idle).toBe(false);

    finishRecording();
    await first;
    await new Promise((r) => setImmediate(r));
    expect(order.at(-1)).toBe('recorded 1');
    expect(scheduler.holds('d1')).toBe(false);
    expect(idle).toBe(true);
  });

  it('settles with the error of the part handed back', async () => {
    const scheduler = new FairScheduler({ total: 1, perAccount: 1, backlogPerAccount: 5, backlogTotal: 5 });
    const done = scheduler.submit({
      id: 'd1',
      accountId: 'a',
      endpointId: 'e',
      key: 'k',
      host: 'h', cost: 1, run: async () => async () => {
        throw new Error('write failed');
      },
    })!;
    await expect(done).rejects.toThrow('write failed');
    await scheduler.idle();
  });
});
