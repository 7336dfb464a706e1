import { EllipsizedId } from '../../components/EllipsizedId';
import { StatusBadge } from '../../components/StatusBadge';
import { eventTypeName, formatMs } from '../../format';
import type { PaymentDelivery } from '../../hooks/paymentDetail';
import { SandboxTime } from './SandboxTime';
import type { TimelineItem } from './timelineItems';

/** The list named "Timeline" (by the heading before it): every step with its sandbox time and how long ago it was. */
export function Timeline({ items }: { items: TimelineItem[] }) {
  return (
    <ol aria-labelledby="timeline-title" className="story">
      {items.map((item) => (
        <li key={item.key} className={`story-${item.kind}`} data-kind={item.kind}>
          <p className="story-when">
            <SandboxTime iso={item.at} />
          </p>
          <div className="story-what">
            <ItemText item={item} />
          </div>
        </li>
      ))}
    </ol>
  );
}

function ItemText({ item }: { item: TimelineItem }) {
  switch (item.kind) {
    case 'status':
      return (
        <p>
          {item.first ? 'Created, status ' : 'Status changed to '}
          <StatusBadge status={item.status} />
        </p>
      );
    case 'event':
      return (
        <>
          <p>
            Event <code>{eventTypeName(item.eventType)}</code>
          </p>
          <EllipsizedId id={item.eventId} what={`event id ${item.eventId}`} />
        </>
      );
    case 'attempt':
      return (
        <p>
          Webhook <code>{eventTypeName(item.delivery.eventType)}</code>, attempt {item.number}{' '}
          {item.attempt.error || item.attempt.status < 200 || item.attempt.status > 299 ? (
            <>
              failed: <strong className="story-reason">{item.attempt.error ?? (item.attempt.status ? `HTTP ${item.attempt.status}` : 'no answer')}</strong>.
            </>
          ) : (
            `answered HTTP ${item.attempt.status} in ${formatMs(item.attempt.durationMs)}.`
          )}
        </p>
      );
    case 'delivery':
      return <DeliveryText delivery={item.delivery} />;
  }
}

/** One delivery's latest attempt: its answer, or why it failed and when the next try is due. */
function DeliveryText({ delivery: d }: { delivery: PaymentDelivery }) {
  const failed = d.attempts > 0 && d.state !== 'DELIVERED';
  return (
    <>
      <p>
        Webhook <code>{eventTypeName(d.eventType)}</code> <StatusBadge status={d.state} kind="delivery" />
      </p>
      <p>
        {d.attempts === 0
          ? 'Not attempted yet.'
          : failed
            ? <>Attempt {d.attempts} failed: <strong className="story-reason">{d.lastError ?? (d.lastStatus ? `HTTP ${d.lastStatus}` : 'no answer')}</strong>.</>
            : `Attempt ${d.attempts} answered HTTP ${d.lastStatus ?? '—'} in ${formatMs(d.lastMs)}.`}
      </p>
      {d.nextAttemptAt && (
        <p className="story-next">
          Next {d.attempts === 0 ? 'attempt' : 'retry'} due <SandboxTime iso={d.nextAttemptAt} />
        </p>
      )}
      {d.state === 'DEAD_LETTER' && <p>No more retries: resend it from the deliveries below.</p>}
      <p className="story-id">
        <span className="muted">Endpoint</span> <EllipsizedId id={d.endpointId} what={`endpoint id ${d.endpointId}`} />
      </p>
    </>
  );
}
