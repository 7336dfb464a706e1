import { driverCollection } from '../../db/driverCollection';
import { Batcher } from '../../db/batching';
import { isDuplicateKey } from '../../db/errors';
import { APPLIED_WRITE_CONCERN } from '../../db/writeConcern';
import { SequenceModel } from './eventModel';

/**
 * Reserves `count` consecutive values of the named counter and returns the first. One atomic
 * findOneAndUpdate; the upsert of a brand-new counter can race with another process, so a duplicate-key
 * error is simply retried (the second attempt finds the document).
 */
export function nextSequence(name: string, count = 1): Promise<number> {
  return allocations.run({ name, count });
}

/**
 * Allocations of the same counter asked for in the same turn of the event loop are one $inc of their
 * total (src/db/batching.ts); each gets its own consecutive range, in the order asked.
 */
// Shared by the gateways of a process, like src/db/batching.ts: the counters are the database's, and
// asks of every gateway in one turn share one $inc.
// eslint-disable-next-line no-restricted-syntax -- a batch of the database's counters
const allocations = new Batcher<{ name: string; count: number }, number>(async (asks) => {
  const totals = new Map<string, number>();
  for (const a of asks) totals.set(a.name, (totals.get(a.name) ?? 0) + a.count);
  const firsts = new Map<string, number>();
  await Promise.all([...totals].map(async ([name, total]) => firsts.set(name, await reserve(name, total))));
  return asks.map((a) => {
    const first = firsts.get(a.name)!;
    firsts.set(a.name, first + a.count);
    return { ok: true as const, value: first };
  });
});

async function reserve(name: string, count: number): Promise<number> {
  for (let attempt = 0; ; attempt++) {
    try {
      // The driver's collection: one of these per created payment and per event, and mongoose's query
      // layer only costs CPU here.
      const doc = await driverCollection<{ _id: string; value: number }>(SequenceModel).findOneAndUpdate(
        { _id: name },
        { $inc: { value: count } },
        // Acknowledged once applied: a reservation lost with a crash or a failover was used by no durable
        // write (one that used it comes later in the journal or oplog, so its durability implies this one's),
        // and numbers handed out again are then still unique.
        { upsert: true, returnDocument: 'after', writeConcern: APPLIED_WRITE_CONCERN },
      );
      if (!doc) throw new Error(`sequence ${name} not returned`);
      return doc.value - count + 1;
    } catch (err) {
      if (isDuplicateKey(err) && attempt < 5) continue;
      throw err;
    }
  }
}

