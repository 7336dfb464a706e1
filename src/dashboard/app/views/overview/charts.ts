import type { Overview, OverviewRange } from '../../hooks/overview';
import type { PaymentIntentStatus } from '../../../../../generated/dashboard/documents';
import { formatAmount, formatMs, formatNumber, formatPercent } from '../../format';
import { statusWords } from '../../components/StatusBadge';
import { methodName } from '../../payments';

/**
 * What each chart of the Overview draws, worked out from the server's answer alone: the same numbers go
 * to the bars, to the chart's accessible name and to its "Show as table" table, so they cannot disagree.
 */
export type Unit = 'count' | 'aoa' | 'percent' | 'ms';

export interface Series {
  key: string;
  label: string;
  unit: Unit;
  /** False for columns only the table shows (the counts behind a rate). */
  plotted: boolean;
  /** One value per category; null where there is nothing to say (no final payment, no delivery). */
  values: Array<number | null>;
}

export interface ChartSpec {
  id: string;
  title: string;
  /** What it shows over which range: the table's caption, and the start of the SVG's accessible name. */
  caption: string;
  /** The headline numbers that end the SVG's accessible name ("42 payments"). */
  headline: string;
  /** Of the value axis (the plotted series'). */
  unit: Unit;
  /** Bars stacked per category (statuses, delivery states), or one bar per category. */
  stacked: boolean;
  /** Column header of the categories in the table. */
  categoryHeader: string;
  /** Short axis label and full table label of each category. */
  categories: Array<{ tick: string; label: string }>;
  series: Series[];
  /** Adds a Total column (stacked counts). */
  total: boolean;
  /** What the chart measures, under it, where the title alone does not say (the lag). */
  note?: string;
}

/** What a chart and its table say where there is nothing to measure: never a zero, which would be a value. */
export const NO_DATA = 'no data';

const RANGE_WORDS: Record<OverviewRange, { per: string; range: string }> = {
  LAST_24_HOURS: { per: 'per hour', range: 'last 24 hours' },
  LAST_7_DAYS: { per: 'per day', range: 'last 7 days' },
};

export const rangeWords = (range: OverviewRange) => RANGE_WORDS[range];

/** The order statuses stack in, bottom up: paid first, then in-flight, then the final unpaid ones. */
const STATUS_ORDER: PaymentIntentStatus[] = [
  'SUCCEEDED',
  'PARTIALLY_REFUNDED',
  'REFUNDED',
  'PENDING',
  'PROCESSING',
  'UNKNOWN',
  'FAILED',
  'CANCELLED',
  'EXPIRED',
];

export function formatValue(value: number | null, unit: Unit): string {
  if (value == null) return NO_DATA;
  switch (unit) {
    case 'aoa':
      return formatAmount(value);
    case 'percent':
      return formatPercent(value);
    case 'ms':
      return formatMs(value);
    case 'count':
      return formatNumber(value);
  }
}

/** Bucket starts on the sandbox clock (UTC): "14:00" / "Nov 25" on the axis, the full time in the table. */
function bucketCategories(starts: string[], bucketSeconds: number) {
  const day = bucketSeconds >= 86_400;
  return starts.map((iso) => ({
    tick: day ? new Date(iso).toLocaleDateString('en-US', { month: 'short', day: 'numeric', timeZone: 'UTC' }) : iso.slice(11, 16),
    // Short enough that a phone shows the numbers beside it; the column header says the clock (UTC).
    label: day ? iso.slice(0, 10) : `${iso.slice(5, 10)} ${iso.slice(11, 16)}`,
  }));
}

const series = (key: string, label: string, unit: Unit, values: Array<number | null>, plotted = true): Series => ({ key, label, unit, values, plotted });

/** A chart over the range's buckets (the webhook buckets share the payment buckets' starts). */
function overTime(o: Overview, spec: Pick<ChartSpec, 'id' | 'title' | 'headline' | 'unit' | 'stacked' | 'categoryHeader' | 'series' | 'note'> & { what: string }): ChartSpec {
  const words = rangeWords(o.range);
  const { what, ...rest } = spec;
  return {
    ...rest,
    caption: `${what} ${words.per}, ${words.range}`,
    categories: bucketCategories(
      o.buckets.map((b) => b.start),
      o.bucketSeconds,
    ),
    total: spec.stacked,
  };
}

export function statusChart(o: Overview): ChartSpec {
  const present = STATUS_ORDER.filter((s) => o.buckets.some((b) => b.byStatus.some((c) => c.status === s && c.count > 0)));
  return overTime(o, {
    id: 'chart-status',
    title: 'Payments by status',
    what: 'Payments by status',
    headline: `${formatNumber(o.buckets.reduce((n, b) => n + b.count, 0))} payments`,
    unit: 'count',
    stacked: true,
    categoryHeader: 'Created (UTC)',
    series: present.map((status) =>
      series(
        status,
        statusWords(status),
        'count',
        o.buckets.map((b) => b.byStatus.find((c) => c.status === status)?.count ?? 0),
      ),
    ),
  });
}

export function volumeChart(o: Overview): ChartSpec {
  return overTime(o, {
    id: 'chart-volume',
    title: 'Paid volume',
    what: 'Paid volume (AOA)',
    headline: formatAmount(o.buckets.reduce((n, b) => n + b.paidVolume, 0)),
    unit: 'aoa',
    stacked: false,
    categoryHeader: 'Created (UTC)',
    series: [series('volume', 'Paid volume', 'aoa', o.buckets.map((b) => b.paidVolume))],
  });
}

export function webhookChart(o: Overview): ChartSpec {
  const w = o.webhooks;
  return overTime(o, {
    id: 'chart-webhooks',
    title: 'Webhook deliveries',
    what: 'Webhook deliveries',
    headline: `${formatNumber(w.delivered)} delivered, ${formatNumber(w.failed)} failed, ${formatNumber(w.pending)} pending; success rate ${formatPercent(w.successRate)}`,
    unit: 'count',
    stacked: true,
    categoryHeader: 'Event created (UTC)',
    series: [
      series('DELIVERED', 'Delivered', 'count', w.buckets.map((b) => b.delivered)),
      series('FAILED', 'Failed', 'count', w.buckets.map((b) => b.failed)),
      series('PENDING', 'Pending', 'count', w.buckets.map((b) => b.pending)),
    ],
  });
}

export function lagChart(o: Overview): ChartSpec {
  const w = o.webhooks;
  return overTime(o, {
    id: 'chart-lag',
    title: 'Webhook lag',
    what: 'Median webhook lag',
    headline: w.lagP50Ms == null ? 'no delivery yet' : `p50 ${formatMs(w.lagP50Ms)}, p95 ${formatMs(w.lagP95Ms)}`,
    unit: 'ms',
    stacked: false,
    categoryHeader: 'Event created (UTC)',
    series: [series('lag', 'Median lag', 'ms', w.buckets.map((b) => b.lagP50Ms ?? null))],
    note:
      'Lag: the time from an event’s creation to the start of the attempt that delivered it, median per bar (sandbox time). ' +
      'Over the range: ' +
      (w.lagP50Ms == null ? 'no delivery yet.' : `median ${formatMs(w.lagP50Ms)}, 95 % within ${formatMs(w.lagP95Ms)}.`) +
      ' No bar: no event of that time was delivered.',
  });
}

export function methodChart(o: Overview): ChartSpec {
  const rates = o.methods.map((m) => `${methodName(m.method)} ${formatValue(m.successRate ?? null, 'percent')}`).join(', ');
  const column = (key: string, label: string, unit: Unit, value: (m: Overview['methods'][number]) => number | null, plotted = false) =>
    series(key, label, unit, o.methods.map(value), plotted);
  return {
    id: 'chart-methods',
    caption: `Success rate per payment method, ${rangeWords(o.range).range}`,
    title: 'Success rate per method',
    headline: rates || 'no payments',
    unit: 'percent',
    stacked: false,
    categoryHeader: 'Method',
    categories: o.methods.map((m) => ({ tick: methodName(m.method), label: methodName(m.method) })),
    series: [
      column('rate', 'Success rate', 'percent', (m) => m.successRate ?? null, true),
      column('count', 'Payments', 'count', (m) => m.count),
      column('paid', 'Paid', 'count', (m) => m.paid),
      column('failed', 'Failed', 'count', (m) => m.failed),
      column('volume', 'Paid volume', 'aoa', (m) => m.paidVolume),
    ],
    total: false,
  };
}

/** The headline numbers of the tiles above the charts. */
export function summary(o: Overview) {
  const payments = o.buckets.reduce((n, b) => n + b.count, 0);
  const paidVolume = o.buckets.reduce((n, b) => n + b.paidVolume, 0);
  const paid = o.methods.reduce((n, m) => n + m.paid, 0);
  const failed = o.methods.reduce((n, m) => n + m.failed, 0);
  return { payments, paidVolume, successRate: paid + failed > 0 ? paid / (paid + failed) : null, webhookSuccessRate: o.webhooks.successRate ?? null };
}
