import { Fragment, type ReactNode } from 'react';
import { formatMs, formatNumber, formatPercent } from '../../format';
import type { Chaos } from '../../hooks/webhooks';

/** The REST route that switches chaos on (docs/webhooks.md, "Chaos per endpoint"); the dashboard only shows it. */
export const chaosRoute = (endpointId: string) => `PUT /v1/webhook_endpoints/${endpointId}/chaos`;

/** Terms and values as a list of facts named `label` (the card's other facts look the same). */
function Facts({ label, rows }: { label: string; rows: [string, ReactNode][] }) {
  return (
    <dl className="facts" aria-label={label}>
      {rows.map(([term, value]) => (
        <Fragment key={term}>
          <dt>{term}</dt>
          <dd>{value}</dd>
        </Fragment>
      ))}
    </dl>
  );
}

/** What chaos is set to: each probability per genuine delivery, the delay range and the seed. */
export function ChaosSettings({ chaos }: { chaos: Chaos }) {
  return (
    <Facts
      label="Chaos settings"
      rows={[
        ['Duplicate', formatPercent(chaos.duplicate)],
        ['Reorder', formatPercent(chaos.reorder)],
        ['Bad signature', formatPercent(chaos.badSignature)],
        ['Stale timestamp', formatPercent(chaos.staleTimestamp)],
        ['Delay', chaos.delayMs ? `${formatMs(chaos.delayMs.min)} to ${formatMs(chaos.delayMs.max)}` : 'none'],
        ['Seed', chaos.seed ?? '—'],
      ]}
    />
  );
}

/** What chaos did since it was switched on; a forged copy answered 2xx means the receiver does not verify signatures. */
export function ChaosReport({ report, label }: { report: Chaos['report']; label: string }) {
  return (
    <>
      <Facts
        label={label}
        rows={[
          ['Forged copies sent', formatNumber(report.forgedSent)],
          ['Forged refused', formatNumber(report.forgedRejected)],
          ['Forged accepted', formatNumber(report.forgedAccepted)],
          ['Duplicates sent', formatNumber(report.duplicatesSent)],
          ['Reordered', formatNumber(report.reordered)],
          ['Delayed', formatNumber(report.delayed)],
        ]}
      />
      {report.forgedAccepted > 0 && (
        <p role="alert" className="error">
          Your receiver answered 2xx to {formatNumber(report.forgedAccepted)} forged {report.forgedAccepted === 1 ? 'copy' : 'copies'}: it does not verify signatures (or their
          timestamps) as it must.
        </p>
      )}
    </>
  );
}
