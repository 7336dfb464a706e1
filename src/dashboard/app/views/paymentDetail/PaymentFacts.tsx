import { CopyButton } from '../../components/CopyButton';
import { EllipsizedId } from '../../components/EllipsizedId';
import { StatusBadge } from '../../components/StatusBadge';
import { formatAmount, formatEnum } from '../../format';
import type { PaymentDetail } from '../../hooks/paymentDetail';
import type { PaymentRow } from '../../payments';
import { SandboxTime } from './SandboxTime';

/** The payment's summary, on its page and in the list's detail pane. `current` has the newest status known. */
export function PaymentFacts({ intent, current }: { intent: PaymentDetail; current: PaymentRow }) {
  return (
    <dl className="facts">
      <dt>Id</dt>
      <dd>
        <EllipsizedId id={intent.id} what="payment id" />
      </dd>
      <dt>Status</dt>
      <dd>
        <span aria-live="polite" data-testid="payment-status">
          <StatusBadge status={current.status} />
        </span>
        {current.failureCode && <span className="muted"> {formatEnum(current.failureCode)}</span>}
      </dd>
      <dt>Amount</dt>
      <dd>{formatAmount(current.amount, current.currency)}</dd>
      <dt>Method</dt>
      <dd>{formatEnum(current.paymentMethod)}</dd>
      {current.customer && (
        <>
          <dt>Mobile</dt>
          <dd>{current.customer.mobile}</dd>
        </>
      )}
      {current.reference && (
        <>
          <dt>Reference</dt>
          <dd>
            Entity {current.reference.entity}, number <span className="mono">{current.reference.number}</span>{' '}
            <CopyButton value={current.reference.number} what="reference number" />
            <ReferenceEnd intent={intent} current={current} expiresAt={current.reference.expiresAt} />
          </dd>
        </>
      )}
      <dt>Refunded</dt>
      <dd>{formatAmount(intent.amountRefunded, intent.currency)}</dd>
      {intent.fee != null && (
        <>
          <dt>Fee</dt>
          <dd>{formatAmount(intent.fee, intent.currency)}</dd>
        </>
      )}
      {intent.merchantReference && (
        <>
          <dt>Merchant reference</dt>
          <dd>
            {intent.merchantReference} <CopyButton value={intent.merchantReference} what="merchant reference" />
          </dd>
        </>
      )}
      <dt>Created</dt>
      <dd>
        <SandboxTime iso={intent.createdAt} />
      </dd>
    </dl>
  );
}

/**
 * How long the reference can be paid: its expiry only while it still can be; a cancelled one says when it
 * was cancelled (the event that cancelled it, else the intent's last change), never "expires in 2 d".
 */
function ReferenceEnd({ intent, current, expiresAt }: { intent: PaymentDetail; current: PaymentRow; expiresAt: string }) {
  if (current.status === 'PENDING' || current.status === 'PROCESSING') {
    return (
      <span className="block muted">
        Expires <SandboxTime iso={expiresAt} />
      </span>
    );
  }
  if (current.status === 'CANCELLED') {
    const at = intent.events.nodes.find((e) => e.paymentIntent?.status === 'CANCELLED')?.createdAt ?? current.updatedAt;
    return (
      <span className="block muted" data-testid="reference-end">
        Cancelled at <SandboxTime iso={at} />: it can no longer be paid.
      </span>
    );
  }
  if (current.status === 'EXPIRED') {
    return (
      <span className="block muted" data-testid="reference-end">
        Expired at <SandboxTime iso={expiresAt} />
      </span>
    );
  }
  return null;
}
