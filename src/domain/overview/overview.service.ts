import { accountNow, accountOffsetMs } from '../clock/accountTime';
import { PaymentModel } from '../payments/payment.model';
import type { PaymentStatus } from '../payments/payment.states';
import { WebhookDeliveryModel } from '../webhooks/webhookDelivery.model';
import { mergeBins, percentileOf, type LagBin } from './lagHistogram';
import { deliveryPipeline, paymentPipeline, type DeliveryRow, type PaymentRow } from './overview.pipelines';

/**
 * The dashboard's overview: what an account's payments and webhook deliveries did over the last 24 hours
 * or 7 days of its sandbox clock. The database groups each side into at most a few hundred rows
 * (overview.pipelines.ts); this module only folds those rows into the answer.
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

export async function getOverview(accountId: string, range: OverviewRange): Promise<Overview> {
  const { buckets: n, bucketMs } = RANGES[range];
  const to = accountNow(await accountOffsetMs(accountId));
  const from = new Date(to.getTime() - n * bucketMs);
  const window = { from, to, n, bucketMs };
  const [payments, deliveries] = await Promise.all([
    PaymentModel.aggregate<PaymentRow>(paymentPipeline(accountId, window)),
    WebhookDeliveryModel.aggregate<DeliveryRow>(deliveryPipeline(accountId, window)),
  ]);
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
    byStatus: [...statuses].map(([status, c]) => ({ status, count: c })),
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
    buckets: buckets.map(({ bins, ...b }) => ({ ...b, lagP50Ms: percentileOf(bins, 0.5) })),
  };
}

function rate(good: number, bad: number): number | null {
  return good + bad === 0 ? null : good / (good + bad);
}
