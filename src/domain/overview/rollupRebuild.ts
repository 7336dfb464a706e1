import type { AnyBulkWriteOperation } from 'mongodb';
import { PaymentModel } from '../payments/paymentModel';
import { WebhookDeliveryModel } from '../webhooks/webhookDeliveryModel';
import { deliveryPipeline, paymentPipeline, type DeliveryRow, type OverviewWindow, type PaymentRow } from './overviewPipelines';
import {
  accountHours,
  HOUR_MS,
  markerId,
  PaymentRollupModel,
  rollupId,
  WebhookRollupModel,
  type PaymentRollup,
  type WebhookRollup,
} from './overviewRollupModel';

/**
 * Recomputes an account's rollups from its payments and deliveries with the overview's own
 * aggregations (overviewPipelines.ts), grouped per hour since the epoch, and replaces its rollup
 * documents with the result, then marks the account built. What it corrects: a count an `$inc` missed
 * (a crash between a write and its rollup), an endpoint's deliveries deleted with it, data written
 * before the rollups existed. An `$inc` applied while it runs, between its aggregation and its
 * replacement, is lost or counted twice until the next rebuild: rebuilds are for quiet moments.
 */
export type RollupSide = 'payments' | 'webhooks';

const ALL_HOURS: OverviewWindow = { from: new Date(0), to: new Date(8.64e15), n: Number.MAX_SAFE_INTEGER, bucketMs: HOUR_MS };

export async function rebuildRollups(accountId: string, sides: readonly RollupSide[] = ['payments', 'webhooks']): Promise<void> {
  await Promise.all(sides.map((side) => (side === 'payments' ? rebuildPayments(accountId) : rebuildWebhooks(accountId))));
}

async function rebuildPayments(accountId: string): Promise<void> {
  const rows = await PaymentModel.aggregate<PaymentRow>(paymentPipeline(accountId, ALL_HOURS));
  const hours = new Map<number, PaymentRollup & { m: NonNullable<PaymentRollup['m']> }>();
  for (const { _id, n, amount } of rows) {
    let doc = hours.get(_id.b);
    if (!doc) hours.set(_id.b, (doc = { _id: rollupId(accountId, _id.b * HOUR_MS), m: {} }));
    (doc.m[_id.m] ??= {})[_id.s] = { n, a: amount };
  }
  await replaceHours(PaymentRollupModel, accountId, [...hours.values()]);
}

async function rebuildWebhooks(accountId: string): Promise<void> {
  const rows = await WebhookDeliveryModel.aggregate<DeliveryRow>(deliveryPipeline(accountId, ALL_HOURS));
  const hours = new Map<number, Required<WebhookRollup>>();
  for (const { _id, n, max } of rows) {
    let doc = hours.get(_id.b);
    if (!doc) hours.set(_id.b, (doc = { _id: rollupId(accountId, _id.b * HOUR_MS), c: 0, d: 0, f: 0, l: {} }));
    doc.c += n;
    if (_id.s === 'DELIVERED') doc.d += n;
    else if (_id.s === 'DEAD_LETTER') doc.f += n;
    if (_id.l !== null && max !== null) doc.l[String(_id.l)] = { n, m: max };
  }
  await replaceHours(WebhookRollupModel, accountId, [...hours.values()]);
}

/** One ordered bulk write: the hours computed, the account's other hours deleted, then its marker. */
async function replaceHours(model: typeof PaymentRollupModel | typeof WebhookRollupModel, accountId: string, docs: Array<{ _id: string }>): Promise<void> {
  const marker = markerId(accountId);
  const ops: AnyBulkWriteOperation<{ _id: string }>[] = [
    ...docs.map((doc) => ({ replaceOne: { filter: { _id: doc._id }, replacement: doc, upsert: true } })),
    { deleteMany: { filter: { _id: { ...accountHours(accountId), $nin: docs.map((d) => d._id) } } } },
    { replaceOne: { filter: { _id: marker }, replacement: { _id: marker, built_at: new Date() } as { _id: string }, upsert: true } },
  ];
  await (model.collection as unknown as { bulkWrite(ops: AnyBulkWriteOperation<{ _id: string }>[], o: { ordered: boolean }): Promise<unknown> }).bulkWrite(ops, { ordered: true });
}

// Shared by the gateways of a process: a rebuild recomputes the database's rollups of an account, so a
// second gateway joining the first's rebuild gets the same result with one pass instead of two.
// eslint-disable-next-line no-restricted-syntax -- one rebuild per account and database
const building = new Map<string, Promise<void>>();

/** rebuildRollups for one side, once at a time per account and side in this process. */
export function buildRollupsOnce(accountId: string, side: RollupSide): Promise<void> {
  const key = `${side}:${accountId}`;
  let run = building.get(key);
  if (!run) {
    run = rebuildRollups(accountId, [side]).finally(() => building.delete(key));
    building.set(key, run);
  }
  return run;
}
