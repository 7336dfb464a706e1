import { describe, expect, it } from 'vitest';
import { Batcher, flushAllBatches } from '../../../src/db/batching';
import { isDatabaseUnavailable } from '../../../src/db/unavailable';

/** A flush that records each batch and answers after `release()` (or at once with `immediate`). */
function recordingFlush(opts: { failIndex?: (item: number) => boolean; immediate?: boolean } = {}) {
  const batches: number[][] = [];
  const waiting: Array<() => void> = [];
  const flush = async (items: number[]) => {
    batches.push([...items]);
    if (!opts.immediate) await new Promise<void>((r) => waiting.push(r));
    return items.map((item) =>
      opts.failIndex?.(item) ? { ok: false as const, error: new Error(`item ${item} failed`) } : { ok: true as const, value: item * 10 },
    );
  };
  const release = () => waiting.splice(0).forEach((r) => r());
  return { batches, flush, release };
}

const turn = () => new Promise((r) => setImmediate(r));

describe('Batcher', () => {
  it('sends the items asked for in one turn of the event loop as one batch, each with its own answer', async () => {
    const f = recordingFlush({ immediate: true });
    const b = new Batcher(f.flush);
    const answers = await Promise.all([1, 2, 3].map((i) => b.run(i)));
    expect(answers).toEqual([10, 20, 30]);
    expect(f.batches).toEqual([[1, 2, 3]]);
  });

  it('flushAllBatches sends what waits in any batcher, one made outside the per-collection ones too', async () => {
    const f = recordingFlush({ immediate: true });
    const b = new Batcher(f.flush, 500, 2, 5_000);
    const answer = b.run(7);
    await turn();
    expect(f.batches).toEqual([]); // its window is 5 s
    await flushAllBatches();
    expect(f.batches).toEqual([[7]]);
    expect(await answer).toBe(70);
    expect(b.idle).toBe(true);
  });

  it('with a window, gathers the items of several turns into one batch', async () => {
    const f = recordingFlush({ immediate: true });
    const b = new Batcher(f.flush, 500, 2, 50);
    const first = b.run(1);
    await turn();
    await turn();
    const second = b.run(2);
    expect(f.batches).toEqual([]); // still waiting for more
    expect(await Promise.all([first, second])).toEqual([10, 20]);
    expect(f.batches).toEqual([[1, 2]]);
  });

  it('fails only the item whose outcome failed', async () => {
    const f = recordingFlush({ immediate: true, failIndex: (i) => i === 2 });
    const b = new Batcher(f.flush);
    const settled = await Promise.allSettled([1, 2, 3].map((i) => b.run(i)));
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((settled[1] as PromiseRejectedResult).reason.message).toBe('item 2 failed');
  });

  it('fails every item of a batch whose command failed as a whole', async () => {
    const b = new Batcher<number, number>(async () => {
      throw new Error('connection reset');
    });
    const settled = await Promise.allSettled([1, 2].map((i) => b.run(i)));
    expect(settled.every((s) => s.status === 'rejected' && s.reason.message === 'connection reset')).toBe(true);
  });

  it('keeps at most maxInFlight commands out and sends what accumulated as soon as one returns', async () => {
    const f = recordingFlush();
    const b = new Batcher(f.flush, 500, 1);
    const first = b.run(1);
    await turn();
    const later = [b.run(2), b.run(3)];
    await turn();
    const last = b.run(4);
    await turn();
    expect(f.batches).toEqual([[1]]); // 2, 3 and 4 wait for the command in flight
    f.release();
    expect(await first).toBe(10);
    await turn();
    expect(f.batches).toEqual([[1], [2, 3, 4]]);
    f.release();
    expect(await Promise.all([...later, last])).toEqual([20, 30, 40]);
  });

  it('never sends more than maxBatch items in one command', async () => {
    const f = recordingFlush({ immediate: true });
    const b = new Batcher(f.flush, 3, 2);
    const answers = await Promise.all([1, 2, 3, 4, 5, 6, 7].map((i) => b.run(i)));
    expect(answers).toEqual([10, 20, 30, 40, 50, 60, 70]);
    expect(f.batches.every((batch) => batch.length <= 3)).toBe(true);
    expect(f.batches.flat()).toEqual([1, 2, 3, 4, 5, 6, 7]);
  });

  it('gives up a command never answered at its deadline, as the database unavailable, and frees its place for the next batch', async () => {
    // A flush whose first command never settles (a command written on a connection whose peer is gone
    // unnoticed: test/faults/databaseOutage.fault.ts); later ones answer at once.
    const batches: number[][] = [];
    const flush = (items: number[]) => {
      batches.push([...items]);
      return batches.length === 1 ? new Promise<never>(() => undefined) : Promise.resolve(items.map((i) => ({ ok: true as const, value: i * 10 })));
    };
    const b = new Batcher(flush, 500, 1, 0, 100);
    const hung = b.run(1);
    await turn();
    const next = b.run(2);
    await turn();
    expect(batches).toEqual([[1]]); // 2 waits for the only place in flight
    const err = await hung.then(() => null, (e: unknown) => e);
    expect(err).toMatchObject({ name: 'CommandDeadlineError' });
    expect(isDatabaseUnavailable(err)).toBe(true);
    expect(await next).toBe(20);
    expect(batches).toEqual([[1], [2]]);
    expect(b.idle).toBe(true);
  });

  it('drops the outcome of a command that settles after its deadline', async () => {
    let answer: (v: Array<{ ok: true; value: number }>) => void = () => undefined;
    const b = new Batcher((items: number[]) => new Promise<Array<{ ok: true; value: number }>>((r) => (answer = r)).then((v) => v.slice(0, items.length)), 500, 2, 0, 50);
    const late = b.run(1).then(() => 'resolved', (e: { name?: string }) => e.name);
    expect(await late).toBe('CommandDeadlineError');
    answer([{ ok: true, value: 10 }]);
    await turn();
    expect(await late).toBe('CommandDeadlineError');
    expect(b.idle).toBe(true);
  });
});
