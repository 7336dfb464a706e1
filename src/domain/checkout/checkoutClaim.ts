import { PaymentModel, type PaymentRecord } from '../payments/paymentModel';
import { PAID_STATUSES, type PaymentStatus } from '../payments/paymentStates';
import { CheckoutSessionModel, type CheckoutSessionRecord } from './checkoutSessionModel';

/**
 * The claim that keeps a checkout session to one payment in flight (`active_payment_id`, see
 * checkoutPaymentService.ts): what the payment it names has become, and giving the claim back. Both the
 * next payment attempt and the session's expiry ask, so this module depends on neither.
 */

/**
 * A claim whose payment does not exist after this long was left by a process that died between the
 * claim and the payment's insert (a live one takes milliseconds). Wall-clock time: it measures a
 * process's work, which a sandbox clock advance does not speed up.
 */
export const CLAIM_STALE_MS = 30_000;

/** Unpaid and unable to become paid: their claim can be given back. */
const ENDED_UNPAID: readonly PaymentStatus[] = ['FAILED', 'CANCELLED', 'EXPIRED'];

/**
 * What the claim's payment is now: `freed` (it can never be paid; the claim was just given back), `paid`,
 * `pending_reference` (followed past the session's 30 minutes), `in_flight` (express, not final) or
 * `unsettled` (not readable yet: its claimant looks at the session again after the insert). More:
 * docs/decisions/notes/checkout.md, "ClaimState".
 */
export type ClaimState = 'freed' | 'paid' | 'pending_reference' | 'in_flight' | 'unsettled';

export async function inspectClaim(
  session: Pick<CheckoutSessionRecord, '_id' | 'active_payment_claimed_at'>,
  holder: string,
): Promise<ClaimState> {
  const payment = await PaymentModel.findById(holder, { status: 1, payment_method: 1 }).lean<Pick<PaymentRecord, 'status' | 'payment_method'>>();
  if (payment) {
    if (PAID_STATUSES.includes(payment.status)) return 'paid';
    // FAILED, CANCELLED and EXPIRED are final, so this look is not a check-then-act race: the release
    // hook would do the same, it just may not have run yet.
    if (ENDED_UNPAID.includes(payment.status)) {
      await releaseCheckoutClaim(session._id, holder);
      return 'freed';
    }
    return payment.payment_method === 'multicaixa_reference' && payment.status === 'PENDING' ? 'pending_reference' : 'in_flight';
  }
  const claimedAt = session.active_payment_claimed_at ? new Date(session.active_payment_claimed_at).getTime() : 0;
  if (Date.now() - claimedAt < CLAIM_STALE_MS) return 'unsettled';
  return (await repairAbandonedClaim(session._id, holder)) ? 'freed' : 'unsettled';
}

/**
 * A stale claim without a payment: its claimant most likely died before the insert, but may only have
 * stalled. Mark the claim abandoned first, then look for the payment; the claimant inserts first, then
 * looks at the mark (confirmClaim). Each pair of steps is ordered, so at least one side sees the other:
 * either this finds the payment and leaves the claim, or the claimant finds the mark (or the claim gone)
 * and cancels its own payment. Never two payments in flight, with no cross-document transaction.
 */
async function repairAbandonedClaim(id: string, holder: string): Promise<boolean> {
  const marked = await CheckoutSessionModel.updateOne({ _id: id, active_payment_id: holder }, { $set: { claim_abandoned: true } });
  if (marked.matchedCount === 0) return true; // the claim changed meanwhile: look again
  if (await PaymentModel.exists({ _id: holder })) return false;
  await releaseCheckoutClaim(id, holder);
  return true;
}

/**
 * Gives back a session's claim held by this payment (it failed, was cancelled or expired, or was never
 * created): conditional on the claim still naming it, so a late or repeated call (the release hook is
 * at-least-once) never frees a claim another payment has taken since. The status is left alone: an
 * EXPIRED or COMPLETED session stays so. True when this call released it.
 */
export async function releaseCheckoutClaim(id: string, paymentId: string): Promise<boolean> {
  const res = await CheckoutSessionModel.updateOne(
    { _id: id, active_payment_id: paymentId },
    { $set: { active_payment_id: null, active_payment_claimed_at: null, claim_abandoned: false } },
  );
  return res.modifiedCount === 1;
}
