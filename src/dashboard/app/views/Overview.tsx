import { useMemo } from 'react';
import { EmptyState } from '../components/EmptyState';
import { ErrorAlert } from '../graphql';
import { formatAmount, formatNumber } from '../format';
import { useOverview, type Overview as OverviewData, type OverviewRange } from '../hooks/overview';
import { BASE, Link, navigate, useLocation } from '../router';
import { Loading, Page } from '../ui';
import { ChartCard } from './overview/ChartCard';
import { formatValue, lagChart, methodChart, rangeWords, statusChart, summary, volumeChart, webhookChart } from './overview/charts';
import './overview/overview.css';

/** The range lives in the URL (?range=7d), so a reload or a shared link shows the same overview. */
const RANGES: Array<{ param: string; value: OverviewRange; label: string }> = [
  { param: '24h', value: 'LAST_24_HOURS', label: 'Last 24 hours' },
  { param: '7d', value: 'LAST_7_DAYS', label: 'Last 7 days' },
];

export function Overview() {
  const { query } = useLocation();
  const range = RANGES.find((r) => r.param === query.get('range')) ?? RANGES[0]!;
  const { overview, fetching, error } = useOverview(range.value);

  return (
    <Page title="Overview">
      <div className="range-switch" role="group" aria-label="Range (sandbox time)">
        {RANGES.map((r) => (
          <button
            key={r.param}
            type="button"
            className="secondary"
            aria-pressed={r.value === range.value}
            onClick={() => navigate(r === RANGES[0] ? BASE : `${BASE}?range=${r.param}`, { replace: true })}
          >
            {r.label}
          </button>
        ))}
      </div>
      <ErrorAlert error={error} />
      {!overview || overview.range !== range.value ? fetching && <Loading what="the overview" /> : <OverviewBody overview={overview} />}
    </Page>
  );
}

function OverviewBody({ overview }: { overview: OverviewData }) {
  const charts = useMemo(
    () => [statusChart(overview), volumeChart(overview), methodChart(overview), webhookChart(overview), lagChart(overview)],
    [overview],
  );
  const totals = summary(overview);
  const tiles: Array<[label: string, value: string]> = [
    ['Payments', formatNumber(totals.payments)],
    ['Paid volume', formatAmount(totals.paidVolume)],
    ['Success rate', formatValue(totals.successRate, 'percent')],
    ['Webhook success', formatValue(totals.webhookSuccessRate, 'percent')],
  ];
  const words = rangeWords(overview.range);
  return (
    <>
      <p className="muted range-span">
        Sandbox time {overview.from.slice(0, 16).replace('T', ' ')} to {overview.to.slice(0, 16).replace('T', ' ')} UTC
      </p>
      <dl className="tiles">
        {tiles.map(([label, value]) => (
          <div key={label}>
            <dt>{label}</dt>
            <dd>{value}</dd>
          </div>
        ))}
      </dl>
      {totals.payments === 0 ? (
        <EmptyState title={`No payments in the ${words.range}`}>
          Charts appear once payments are made in this range of sandbox time. Make one from <Link href={`${BASE}/payments`}>Payments</Link>{' '}
          (&ldquo;New test payment&rdquo;) or with the API.
        </EmptyState>
      ) : (
        <div className="charts">
          {charts.map((spec) => (
            <ChartCard key={spec.id} spec={spec} />
          ))}
        </div>
      )}
    </>
  );
}
