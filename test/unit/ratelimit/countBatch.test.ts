import { describe, expect, it } from 'vitest';
import { flushAllBatches } from '../../../src/db/batching';
import { groupedCounter } from '../../../src/domain/ratelimit/countBatch';

describe('groupedCounter (rate-limit counts batched per group)', () => {
  it('counts the requests of one group in one turn with one count of their number, each with its own position', async () => {
    const counts: Array<[string, number]> = [];
    const counter = groupedCounter(
      async (first: { group: string; id: number }, n) => {
        counts.push([first.group, n]);
        return 10 + n;
      },
      (total, r, after) => ({ id: r.id, count: total - after }),
    );
    const answers = await Promise.all([
      counter.run({ group: 'a', id: 1 }),
      counter.run({ group: 'b', id: 2 }),
      counter.run({ group: 'a', id: 3 }),
    ]);
    expect(counts).toEqual([['a', 2], ['b', 1]]);
    expect(answers).toEqual([{ id: 1, count: 11 }, { id: 2, count: 11 }, { id: 3, count: 12 }]);
  });

  it('fails only the requests of the group whose count failed', async () => {
    const counter = groupedCounter(
      async (first: { group: string }) => {
        if (first.group === 'bad') throw new Error('count failed');
        return 1;
      },
      (total) => total,
    );
    const settled = await Promise.allSettled([counter.run({ group: 'bad' }), counter.run({ group: 'good' }), counter.run({ group: 'bad' })]);
    expect(settled.map((s) => s.status)).toEqual(['rejected', 'fulfilled', 'rejected']);
  });

  it('is reached by flushAllBatches (a graceful stop sends the counts still waiting)', async () => {
    const counted: number[] = [];
    const counter = groupedCounter(
      async (_first: { group: string }, n) => {
        counted.push(n);
        return n;
      },
      (total) => total,
    );
    const answer = counter.run({ group: 'a' });
    expect(counted).toEqual([]); // waits for the end of the turn
    await flushAllBatches();
    expect(counted).toEqual([1]);
    expect(await answer).toBe(1);
    expect(counter.idle).toBe(true);
  });
});
