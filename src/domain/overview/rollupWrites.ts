import { updateOneBatched } from '../../db/batching';
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

function send(model: typeof PaymentRollupModel | typeof WebhookRollupModel, id: string, update: Record<string, unknown>): Promise<void> {
  const write = updateOneBatched(model, { _id: id }, update, 'applied', true)
    .catch((err: unknown) => logger.warn({ err, rollup: id }, 'overview rollup update failed (rebuildRollups corrects it)'))
    .finally(() => inFlight.delete(write));
  inFlight.add(write);
  return write;
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
  return send(PaymentRollupModel, paymentHour(p), { $inc: { [`${at}.n`]: 1, [`${at}.a`]: p.amount } });
}

/** The payment moves from one status's counters to the other's, in the hour it was created. */
export function paymentStatusChanged(p: PaymentFields, from: PaymentStatus, to: PaymentStatus): Promise<void> {
  if (from === to) return Promise.resolve();
  const was = `m.${p.payment_method}.${from}`;
  const is = `m.${p.payment_method}.${to}`;
  return send(PaymentRollupModel, paymentHour(p), { $inc: { [`${was}.n`]: -1, [`${was}.a`]: -p.amount, [`${is}.n`]: 1, [`${is}.a`]: p.amount } });
}

/** Deliveries recorded without their event's time are outside the overview (as in its aggregation). */
function deliveryHour(d: DeliveryFields): string | null {
  return d.event_created_at ? rollupId(d.account_id, hourStart(d.event_created_at)) : null;
}

export function deliveryCreated(d: DeliveryFields): Promise<void> {
  const id = deliveryHour(d);
  return id ? send(WebhookRollupModel, id, { $inc: { c: 1 } }) : Promise.resolve();
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
  const update: Record<string, unknown> = { $inc: inc };
  if (to === 'DELIVERED' && deliveredAt && d.event_created_at) {
    const lag = Math.max(0, deliveredAt.getTime() - new Date(d.event_created_at).getTime());
    const bin = lagBin(lag);
    inc[`l.${bin}.n`] = 1;
    update.$max = { [`l.${bin}.m`]: lag };
  }
  return send(WebhookRollupModel, id, update);
}
