import { Batcher, updateOneBatched, type Outcome } from '../../db/batching';
import { logger } from '../../logger';
import type { PaymentStatus } from '../payments/paymentStates';
import type { DeliveryState } from '../webhooks/deliveryStates';
import { lagBin } from './lagHistogram';
import { hourStart, markerId, PaymentRollupModel, rollupId, WebhookRollupModel } from './overviewRollupModel';

/**
 * The one place the overview's hourly rollups change (overviewRollupModel.ts): called where a payment
 * is created or changes status and where a delivery is created or reaches a final state, with the
 * states before and after the write that moved them. Each call is one `$inc` upsert on the hour of the
 * payment's `created_at` (or the delivery's event's), batched with the others of the turn, acknowledged
 * once applied (w: 1) and not awaited by the caller's answer: a count lost with a crash between the
 * write and its rollup is corrected by rebuildRollups (rollupRebuild.ts), which recomputes the account
 * from its payments and deliveries. A failure is logged, never the caller's.
 */
type PaymentFields = { account_id: string; created_at: Date; payment_method: string; amount: number };
type DeliveryFields = { account_id: string; event_created_at?: Date | null };

// Shared by the gateways of a process: writes to the database's rollups, waited for by whoever needs
// them written; waiting on another gateway's too is only longer, never wrong.
// eslint-disable-next-line no-restricted-syntax -- the database's writes in flight, not one gateway's
const inFlight = new Set<Promise<void>>();

type RollupModel = typeof PaymentRollupModel | typeof WebhookRollupModel;

/** Whatever happens to `write`, it is tracked until it ends, and its failure logged, never the caller's. */
function tracked(write: Promise<unknown>, id: string): Promise<void> {
  const done: Promise<void> = write
    .then(
      () => undefined,
      (err: unknown) => void logger.warn({ err, rollup: id }, 'overview rollup update failed (rebuildRollups corrects it)'),
    )
    .finally(() => inFlight.delete(done));
  inFlight.add(done);
  return done;
}

function send(model: RollupModel, id: string, update: Record<string, unknown>): Promise<void> {
  return tracked(updateOneBatched(model, { _id: id }, update, 'applied', true), id);
}

/** Counts for one rollup document: `$inc`s summed, `$max`es kept. */
interface RollupCount {
  model: RollupModel;
  id: string;
  inc: Record<string, number>;
  max?: Record<string, number>;
}

// Counts asked for together (one turn, or while earlier updates are in flight), summed per document:
// payments created or moved together land in one hour's document, and one update carries them all.
// The shared Batcher (src/db/batching.ts), so that flushAllBatches sends what waits at a graceful stop.
// eslint-disable-next-line no-restricted-syntax -- a batch of the database's counters, like src/db/batching.ts
const counts = new Batcher<RollupCount, void>(async (asks) => {
  const byDocument = new Map<string, { first: RollupCount; inc: Record<string, number>; max: Record<string, number>; asks: number[] }>();
  asks.forEach((ask, i) => {
    const key = `${ask.model.collection.name}\u0000${ask.id}`;
    let merged = byDocument.get(key);
    if (!merged) byDocument.set(key, (merged = { first: ask, inc: {}, max: {}, asks: [] }));
    merged.asks.push(i);
    for (const [field, n] of Object.entries(ask.inc)) merged.inc[field] = (merged.inc[field] ?? 0) + n;
    for (const [field, m] of Object.entries(ask.max ?? {})) merged.max[field] = Math.max(merged.max[field] ?? m, m);
  });
  const out: Array<Outcome<void>> = [];
  await Promise.all(
    [...byDocument.values()].map(async ({ first, inc, max, asks: indexes }) => {
      const update: Record<string, unknown> = { $inc: inc };
      if (Object.keys(max).length > 0) update.$max = max;
      const outcome: Outcome<void> = await updateOneBatched(first.model, { _id: first.id }, update, 'applied', true).then(
        () => ({ ok: true, value: undefined }),
        (error: unknown) => ({ ok: false, error }),
      );
      for (const i of indexes) out[i] = outcome;
    }),
  );
  return out;
});

/** Adds `inc` (and `max`) to the document's next update; resolves when that update is applied (or has failed). */
function count(model: RollupModel, id: string, inc: Record<string, number>, max?: Record<string, number>): Promise<void> {
  return tracked(counts.run({ model, id, inc, max }), id);
}

/** Resolves once every rollup update started so far has been applied (or has failed). */
export async function rollupWritesSettled(): Promise<void> {
  while (inFlight.size > 0) await Promise.all([...inFlight]);
}

/**
 * A new account has no payments nor deliveries: its rollups are complete from the start (their markers),
 * and its overview never needs a rebuild unless a count is lost.
 */
export function accountCreated(accountId: string): Promise<void> {
  const marker = { $set: { built_at: new Date() } };
  return Promise.all([send(PaymentRollupModel, markerId(accountId), marker), send(WebhookRollupModel, markerId(accountId), marker)]).then(() => undefined);
}

function paymentHour(p: PaymentFields): string {
  return rollupId(p.account_id, hourStart(p.created_at));
}

export function paymentCreated(p: PaymentFields & { status: PaymentStatus }): Promise<void> {
  const at = `m.${p.payment_method}.${p.status}`;
  return count(PaymentRollupModel, paymentHour(p), { [`${at}.n`]: 1, [`${at}.a`]: p.amount });
}

/** The payment moves from one status's counters to the other's, in the hour it was created. */
export function paymentStatusChanged(p: PaymentFields, from: PaymentStatus, to: PaymentStatus): Promise<void> {
  if (from === to) return Promise.resolve();
  const was = `m.${p.payment_method}.${from}`;
  const is = `m.${p.payment_method}.${to}`;
  return count(PaymentRollupModel, paymentHour(p), { [`${was}.n`]: -1, [`${was}.a`]: -p.amount, [`${is}.n`]: 1, [`${is}.a`]: p.amount });
}

/** Deliveries recorded without their event's time are outside the overview (as in its aggregation). */
function deliveryHour(d: DeliveryFields): string | null {
  return d.event_created_at ? rollupId(d.account_id, hourStart(d.event_created_at)) : null;
}

export function deliveryCreated(d: DeliveryFields): Promise<void> {
  const id = deliveryHour(d);
  return id ? count(WebhookRollupModel, id, { c: 1 }) : Promise.resolve();
}

const FINAL_COUNTER: Partial<Record<DeliveryState, 'd' | 'f'>> = { DELIVERED: 'd', DEAD_LETTER: 'f' };

/**
 * A delivery's state moved from `from` to `to` (PENDING and RETRYING are both pending: created and
 * neither delivered nor dead-lettered). `deliveredAt`: its first success, when this move delivered it;
 * its lag from the event goes into its bin (lagHistogram.ts).
 */
export function deliveryMoved(d: DeliveryFields, from: DeliveryState, to: DeliveryState, deliveredAt: Date | null): Promise<void> {
  const id = deliveryHour(d);
  const was = FINAL_COUNTER[from];
  const is = FINAL_COUNTER[to];
  if (!id || was === is) return Promise.resolve();
  const inc: Record<string, number> = {};
  if (was) inc[was] = -1;
  if (is) inc[is] = 1;
  if (to === 'DELIVERED' && deliveredAt && d.event_created_at) {
    const lag = Math.max(0, deliveredAt.getTime() - new Date(d.event_created_at).getTime());
    const bin = lagBin(lag);
    inc[`l.${bin}.n`] = 1;
    return count(WebhookRollupModel, id, inc, { [`l.${bin}.m`]: lag });
  }
  return count(WebhookRollupModel, id, inc);
}
