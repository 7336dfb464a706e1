import type { DeliveryState } from '../webhooks/deliveryStates';
import type { PaymentStatus } from '../payments/paymentStates';
import type { DeliveryRow, OverviewWindow, PaymentRow } from './overviewPipelines';
import { hourOf, hoursFrom, markerId, PaymentRollupModel, WebhookRollupModel, type PaymentRollup, type WebhookRollup } from './overviewRollupModel';
import { buildRollupsOnce, type RollupSide } from './rollupRebuild';

/**
 * The overview's rows read from the hourly rollups: one range read of `_id` per side (at most 168
 * hours and the account's marker), turned into the rows the aggregations answer (overviewPipelines.ts)
 * so that the same fold serves both. The window must start on an hour. An account without its marker
 * has never been built (its data predates the rollups): it is rebuilt once, then read again.
 */
export async function rollupRows(accountId: string, w: OverviewWindow): Promise<{ payments: PaymentRow[]; deliveries: DeliveryRow[] }> {
  const [payments, deliveries] = await Promise.all([
    readHours<PaymentRollup>(PaymentRollupModel, 'payments', accountId, w),
    readHours<WebhookRollup>(WebhookRollupModel, 'webhooks', accountId, w),
  ]);
  return {
    payments: payments.flatMap(({ b, doc }) => paymentRows(b, doc)),
    deliveries: deliveries.flatMap(({ b, doc }) => deliveryRows(b, doc)),
  };
}

async function readHours<T extends { _id: string }>(
  model: typeof PaymentRollupModel | typeof WebhookRollupModel,
  side: RollupSide,
  accountId: string,
  w: OverviewWindow,
): Promise<Array<{ b: number; doc: T }>> {
  const read = () => model.collection.find({ _id: hoursFrom(accountId, w.from.getTime()) } as never).toArray() as unknown as Promise<T[]>;
  let docs = await read();
  const marker = markerId(accountId);
  if (!docs.some((d) => d._id === marker)) {
    await buildRollupsOnce(accountId, side);
    docs = await read();
  }
  const hours: Array<{ b: number; doc: T }> = [];
  for (const doc of docs) {
    if (doc._id === marker) continue;
    // Past `to` only by a clock that moved while reading: kept in the last bucket, as the aggregation does.
    const b = Math.min(w.n - 1, Math.floor((hourOf(doc._id) - w.from.getTime()) / w.bucketMs));
    if (b >= 0) hours.push({ b, doc });
  }
  return hours;
}

function paymentRows(b: number, doc: PaymentRollup): PaymentRow[] {
  const rows: PaymentRow[] = [];
  for (const [m, statuses] of Object.entries(doc.m ?? {})) {
    for (const [s, { n, a }] of Object.entries(statuses)) {
      if (n > 0) rows.push({ _id: { b, s: s as PaymentStatus, m }, n, amount: a });
    }
  }
  return rows;
}

function deliveryRows(b: number, doc: WebhookRollup): DeliveryRow[] {
  const row = (s: DeliveryState, n: number, l: number | null = null, max: number | null = null): DeliveryRow => ({ _id: { b, s, l }, n, max });
  const delivered = doc.d ?? 0;
  const failed = doc.f ?? 0;
  const binned = Object.entries(doc.l ?? {}).filter(([, bin]) => bin.n > 0);
  const withLag = binned.reduce((sum, [, bin]) => sum + bin.n, 0);
  return [
    ...binned.map(([l, bin]) => row('DELIVERED', bin.n, Number(l), bin.m)),
    row('DELIVERED', delivered - withLag),
    row('DEAD_LETTER', failed),
    row('PENDING', (doc.c ?? 0) - delivered - failed),
  ].filter((r) => r.n > 0);
}
