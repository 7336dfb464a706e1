import { useId, useState } from 'react';
import { ConfirmButton, ConfirmDialog } from '../../components/ConfirmDialog';
import { ErrorAlert, newIdempotencyKey, throwIfError } from '../../graphql';
import { formatAmount } from '../../format';
import { useCancelPayment, useRefundPayment, useSimulateReferencePaid, type PaymentDetail } from '../../hooks/paymentDetail';

/** What the actions need of the payment: its current state and what is left to refund. */
type Intent = Pick<PaymentDetail, 'id' | 'status' | 'paymentMethod' | 'reference' | 'amount' | 'amountRefunded' | 'currency'>;

const kz = (amount: number) => formatAmount(amount, 'AOA', { symbol: true });

/**
 * What can be done to the payment now. Refund and Cancel cannot be undone, so each asks first in a dialog
 * that says what happens; Cancel is styled as destructive and kept apart from "Simulate reference paid".
 */
export function PaymentActions({ intent, onChanged }: { intent: Intent; onChanged: () => void }) {
  const titleId = useId();
  const [, cancel] = useCancelPayment();
  const [paidState, simulatePaid] = useSimulateReferencePaid();
  const remaining = intent.amount - intent.amountRefunded;
  const canCancel = intent.status === 'PENDING' || intent.status === 'PROCESSING';
  const canRefund = (intent.status === 'SUCCEEDED' || intent.status === 'PARTIALLY_REFUNDED') && remaining > 0;
  const reference = intent.status === 'PENDING' && intent.paymentMethod === 'MULTICAIXA_REFERENCE' ? intent.reference : null;
  if (!canCancel && !canRefund && !reference) return null;

  return (
    <section aria-labelledby={titleId} className="card payment-actions">
      <h2 id={titleId}>Actions</h2>
      <div className="actions">
        {reference && (
          <button type="button" disabled={paidState.fetching} onClick={() => simulatePaid({ reference: reference.number }).then((res) => !res.error && onChanged())}>
            Simulate reference paid
          </button>
        )}
        {canRefund && <RefundButton intent={intent} remaining={remaining} onChanged={onChanged} />}
        {canCancel && (
          <ConfirmButton
            title="Cancel this payment?"
            description={
              <p>
                The payment of {kz(intent.amount)} becomes Cancelled and can no longer be paid
                {reference ? ': the reference stops working at once' : ''}. Your endpoints receive a payment cancelled event. This cannot be undone.
              </p>
            }
            confirmLabel="Cancel payment"
            action={async () => {
              throwIfError(await cancel({ id: intent.id }));
              onChanged();
            }}
          >
            Cancel payment
          </ConfirmButton>
        )}
      </div>
      <ErrorAlert error={paidState.error} />
    </section>
  );
}

/** Refund asks for the amount in its dialog, and its question says the amount in kwanza before anything is sent. */
function RefundButton({ intent, remaining, onChanged }: { intent: Intent; remaining: number; onChanged: () => void }) {
  const [open, setOpen] = useState(false);
  const [amount, setAmount] = useState(String(remaining));
  const [, refund] = useRefundPayment();
  const value = Number(amount);
  const valid = Number.isInteger(value) && value >= 1 && value <= remaining;
  const fieldId = useId();

  const confirm = async () => {
    if (!valid) throw new Error(`Enter an amount to refund between 1 and ${kz(remaining)}, in whole kwanza.`);
    throwIfError(await refund({ input: { paymentIntent: intent.id, amount: value }, key: newIdempotencyKey() }));
    onChanged();
  };

  return (
    <>
      <button
        type="button"
        className="secondary"
        onClick={() => {
          setAmount(String(remaining));
          setOpen(true);
        }}
      >
        Refund…
      </button>
      {open && (
        <ConfirmDialog
          title={valid ? `Refund ${kz(value)} of ${kz(intent.amount)}?` : `Refund part of ${kz(intent.amount)}?`}
          description={
            <>
              <label htmlFor={fieldId}>Amount to refund (Kz)</label>
              <input id={fieldId} type="number" inputMode="numeric" min={1} max={remaining} step={1} value={amount} onChange={(e) => setAmount(e.target.value)} />
              <p className="muted">
                Up to {kz(remaining)} is left to refund. The customer gets the amount back and your endpoints receive refund events. A refund cannot be
                undone.
              </p>
            </>
          }
          confirmLabel="Refund"
          onConfirm={confirm}
          onClose={() => setOpen(false)}
        />
      )}
    </>
  );
}
