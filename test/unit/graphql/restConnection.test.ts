import { describe, expect, it } from 'vitest';
import { restConnection } from '../../../src/graphql/pagination';

/** A REST list over ids 1..total, newest first, as `limit` and `starting_after` page it; counts its reads. */
function restList(total: number) {
  const ids = Array.from({ length: total }, (_, i) => ({ id: String(total - i) }));
  const reads: Array<[number, string | null | undefined]> = [];
  const page = async (limit: number, startingAfter: string | null | undefined) => {
    reads.push([limit, startingAfter]);
    const from = startingAfter ? ids.findIndex((x) => x.id === startingAfter) + 1 : 0;
    return ids.slice(from, from + limit);
  };
  return { page, reads };
}

describe('restConnection: a Relay page over a REST list that says nothing of what follows', () => {
  it('below the maximum limit, reads first + 1 once', async () => {
    const { page, reads } = restList(5);
    const c = await restConnection(page, 2, null, 500);
    expect(c.items.map((x) => x.id)).toEqual(['5', '4']);
    expect(c.hasNextPage).toBe(true);
    expect(reads).toEqual([[3, null]]);
    const last = await restConnection(page, 2, '2', 500);
    expect(last.items.map((x) => x.id)).toEqual(['1']);
    expect(last.hasNextPage).toBe(false);
    expect(last.hasPreviousPage).toBe(true);
  });

  it('at the maximum, reads the page, then one item after it only when the page is full', async () => {
    const full = restList(5);
    const c = await restConnection(full.page, 3, null, 3);
    expect(c.items.map((x) => x.id)).toEqual(['5', '4', '3']);
    expect(c.hasNextPage).toBe(true);
    expect(full.reads).toEqual([[3, null], [1, '3']]);
    const exact = restList(3);
    expect((await restConnection(exact.page, 3, null, 3)).hasNextPage).toBe(false);
    const short = restList(2);
    expect((await restConnection(short.page, 3, null, 3)).hasNextPage).toBe(false);
    expect(short.reads).toEqual([[3, null]]);
  });
});
