import { Batcher, type Outcome } from '../../db/batching';

/**
 * The batching of rate-limit counts, apart from their rules (rateLimitService.ts). Requests of the same
 * group (key, account) that arrive in the same turn of the event loop are counted together, with one
 * `$inc` of their number (src/db/batching.ts): each still counts, in the database, and gets its own
 * position in the window (`after`: how many of its group were counted after it), so the decisions are
 * exactly those of counting them one by one. A group whose count fails fails its own requests only.
 * Built on the shared Batcher, so that flushAllBatches sends what waits here at a graceful stop.
 */
export function groupedCounter<R extends { group: string }, C, O>(
  countN: (first: R, n: number) => Promise<C>,
  answer: (counted: C, request: R, after: number) => O,
): Batcher<R, O> {
  return new Batcher<R, O>(async (requests) => {
    const groups = new Map<string, number[]>();
    requests.forEach((r, i) => groups.set(r.group, [...(groups.get(r.group) ?? []), i]));
    const out: Array<Outcome<O>> = [];
    await Promise.all(
      [...groups.values()].map(async (indexes) => {
        try {
          const counted = await countN(requests[indexes[0]!]!, indexes.length);
          indexes.forEach((requestIndex, j) => {
            out[requestIndex] = { ok: true, value: answer(counted, requests[requestIndex]!, indexes.length - 1 - j) };
          });
        } catch (error) {
          for (const requestIndex of indexes) out[requestIndex] = { ok: false, error };
        }
      }),
    );
    return out;
  });
}
