import { accountNow, accountOffsetMs } from '../clock/accountTime';
import { PaymentModel } from '../payments/paymentModel';
import { PAYMENT_STATUSES, type PaymentStatus } from '../payments/paymentStates';
import { WebhookDeliveryModel } from '../webhooks/webhookDeliveryModel';
import { mergeBins, percentileOf, type LagBin } from './lagHistogram';
import { deliveryPipeline, paymentPipeline, type DeliveryRow, type OverviewWindow, type PaymentRow } from './overviewPipelines';
import { hourStart, HOUR_MS } from './overviewRollupModel';
import { rollupRows } from './rollupRead';

/**
 * The dashboard's overview: what an account's payments and webhook deliveries did over the last 24 hours
 * or 7 days of its sandbox clock, in whole hours: the range ends with the end of the current hour, so
 * that each bucket is a set of the hourly rollups (overviewRollupModel.ts). The rows come from the
 * rollups (rollupRead.ts), at most 168 documents a side whatever the volume; aggregateOverview computes
 * the same answer from the payments and deliveries themselves (overviewPipelines.ts), the source the
 * rollups are rebuilt from. This module folds rows into the answer.
 */
export type OverviewRange = 'LAST_24_HOURS' | 'LAST_7_DAYS';

const RANGES: Record<OverviewRange, { buckets: number; bucketMs: number }> = {
  LAST_24_HOURS: { buckets: 24, bucketMs: 3_600_000 },
  LAST_7_DAYS: { buckets: 7, bucketMs: 86_400_000 },
};

const PAID: ReadonlySet<string> = new Set<PaymentStatus>(['SUCCEEDED', 'PARTIALLY_REFUNDED', 'REFUNDED']);
const FAILED: ReadonlySet<string> = new Set<PaymentStatus>(['FAILED', 'CANCELLED', 'EXPIRED']);

export interface OverviewBucket {
  start: Date;
  byStatus: { status: PaymentStatus; count: number }[];
  count: number;
  paidVolume: number;
}

export interface MethodOverview {
  /** As REST spells it (`multicaixa_express`). */
  method: string;
  count: number;
  paid: number;
  failed: number;
  successRate: number | null;
  paidVolume: number;
}

export interface WebhookBucket {
  start: Date;
  delivered: number;
  failed: number;
  pending: number;
  lagP50Ms: number | null;
}

export interface WebhookOverview {
  deliveries: number;
  delivered: number;
  failed: number;
  pending: number;
  successRate: number | null;
  lagP50Ms: number | null;
  lagP95Ms: number | null;
  buckets: WebhookBucket[];
}

export interface Overview {
  range: OverviewRange;
  from: Date;
  to: Date;
  bucketSeconds: number;
  buckets: OverviewBucket[];
  methods: MethodOverview[];
  webhooks: WebhookOverview;
}

/** The range ending with the current hour of `now` (account time), in `range`'s buckets. */
export function overviewWindow(range: OverviewRange, now: Date): OverviewWindow {
  const { buckets: n, bucketMs } = RANGES[range];
  const to = new Date(hourStart(now) + HOUR_MS);
  return { from: new Date(to.getTime() - n * bucketMs), to, n, bucketMs };
}

export async function getOverview(accountId: string, range: OverviewRange): Promise<Overview> {
  const window = overviewWindow(range, accountNow(await accountOffsetMs(accountId)));
  const { payments, deliveries } = await rollupRows(accountId, window);
  return foldOverview(range, window, payments, deliveries);
}

/** The same answer as getOverview over the same window, aggregated from the payments and deliveries. */
export async function aggregateOverview(accountId: string, range: OverviewRange, window: OverviewWindow): Promise<Overview> {
  const [payments, deliveries] = await Promise.all([
    PaymentModel.aggregate<PaymentRow>(paymentPipeline(accountId, window)),
    WebhookDeliveryModel.aggregate<DeliveryRow>(deliveryPipeline(accountId, window)),
  ]);
  return foldOverview(range, window, payments, deliveries);
}

function foldOverview(range: OverviewRange, { from, to, n, bucketMs }: OverviewWindow, payments: PaymentRow[], deliveries: DeliveryRow[]): Overview {
  const starts = Array.from({ length: n }, (_, i) => new Date(from.getTime() + i * bucketMs));
  return {
    range,
    from,
    to,
    bucketSeconds: bucketMs / 1000,
    buckets: paymentBuckets(payments, starts),
    methods: methodOverviews(payments),
    webhooks: webhookOverview(deliveries, starts),
  };
}

function paymentBuckets(rows: PaymentRow[], starts: Date[]): OverviewBucket[] {
  const buckets = starts.map((start) => ({ start, statuses: new Map<PaymentStatus, number>(), count: 0, paidVolume: 0 }));
  for (const { _id, n, amount } of rows) {
    const bucket = buckets[_id.b];
    if (!bucket) continue;
    bucket.count += n;
    bucket.statuses.set(_id.s, (bucket.statuses.get(_id.s) ?? 0) + n);
    if (PAID.has(_id.s)) bucket.paidVolume += amount;
  }
  return buckets.map(({ start, statuses, count, paidVolume }) => ({
    start,
    // In the state machine's order, whichever order the rows came in.
    byStatus: PAYMENT_STATUSES.filter((status) => statuses.has(status)).map((status) => ({ status, count: statuses.get(status)! })),
    count,
    paidVolume,
  }));
}

function methodOverviews(rows: PaymentRow[]): MethodOverview[] {
  const methods = new Map<string, MethodOverview>();
  for (const { _id, n, amount } of rows) {
    let m = methods.get(_id.m);
    if (!m) methods.set(_id.m, (m = { method: _id.m, count: 0, paid: 0, failed: 0, successRate: null, paidVolume: 0 }));
    m.count += n;
    if (PAID.has(_id.s)) {
      m.paid += n;
      m.paidVolume += amount;
    } else if (FAILED.has(_id.s)) m.failed += n;
  }
  for (const m of methods.values()) m.successRate = rate(m.paid, m.failed);
  return [...methods.values()].sort((a, b) => a.method.localeCompare(b.method));
}

function webhookOverview(rows: DeliveryRow[], starts: Date[]): WebhookOverview {
  const buckets = starts.map((start) => ({ start, delivered: 0, failed: 0, pending: 0, bins: [] as LagBin[] }));
  for (const { _id, n, max } of rows) {
    const bucket = buckets[_id.b];
    if (!bucket) continue;
    if (_id.s === 'DELIVERED') bucket.delivered += n;
    else if (_id.s === 'DEAD_LETTER') bucket.failed += n;
    else bucket.pending += n;
    if (_id.l !== null && max !== null) bucket.bins.push({ bin: _id.l, count: n, max });
  }
  const sum = (key: 'delivered' | 'failed' | 'pending') => buckets.reduce((total, b) => total + b[key], 0);
  const delivered = sum('delivered');
  const failed = sum('failed');
  const pending = sum('pending');
  const allBins = mergeBins(buckets.flatMap((b) => b.bins));
  return {
    deliveries: delivered + failed + pending,
    delivered,
    failed,
    pending,
    successRate: rate(delivered, failed),
    lagP50Ms: percentileOf(allBins, 0.5),
    lagP95Ms: percentileOf(allBins, 0.95),
    // A day's bucket holds the same bin from several hours: merged, as the aggregation's $group would.
    buckets: buckets.map(({ bins, ...b }) => ({ ...b, lagP50Ms: percentileOf(mergeBins(bins), 0.5) })),
  };
}

function rate(good: number, bad: number): number | null {
  return good + bad === 0 ? null : good / (good + bad);
}
