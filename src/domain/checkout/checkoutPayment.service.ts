import { ApiError, isApiError } from '../../errors';
import { newId } from '../../ids';
import { nowForAccount } from '../clock/clock';
import { checkOfferedMethod, type PublicPaymentInput } from '../links/linkPayment.service';
import { PaymentModel, type PaymentRecord } from '../payments/payment.model';
import { cancelPaymentIntent, createPaymentIntent } from '../payments/payment.service';
import { toPublicPaymentView, type PublicPaymentView } from '../payments/payment.serializer';
import { PAID_STATUSES, type PaymentStatus } from '../payments/payment.states';
import { validateCreateInput, type CreatePaymentIntentInput } from '../payments/payment.validation';
import { CheckoutSessionModel, type CheckoutSessionRecord } from './checkoutSession.model';
import { expireCheckoutSession, getPublicCheckoutSession, releaseCheckoutClaim } from './checkoutSession.service';

/**
 * A claim whose payment does not exist after this long was left by a process that died between the
 * claim and the payment's insert (a live one takes milliseconds). Wall-clock time: it measures a
 * process's work, which a sandbox clock advance does not speed up.
 */
export const CLAIM_STALE_MS = 30_000;

/** Unpaid and unable to become paid: their claim can be given back. */
const ENDED_UNPAID: readonly PaymentStatus[] = ['FAILED', 'CANCELLED', 'EXPIRED'];

/**
 * A payment on a checkout page: one session, at most one charge.
 *
 * The session holds at most one payment in flight. Before creating the intent, this claims the session
 * for the intent's id with one update conditional on the session being OPEN, unexpired and unclaimed
 * (atomic on a single document, on MongoDB as on the embedded engine), so of any number of concurrent
 * attempts exactly one creates a payment and the others get 409 `payment_already_processed`. The claim
 * is given back when its payment fails, is cancelled or expires (the `checkout.release` event hook,
 * checkoutLifecycle.ts); a payment that succeeds completes the session and keeps it. Whoever finds the
 * session claimed by a payment that has already ended gives the claim back itself, so a customer retrying
 * after a failure never waits for the hook.
 *
 * The intent carries the session's `merchant_reference` (so every payment.* event does) and
 * `metadata.checkout_session` = the session id (set by the payments core from `via`).
 */
export async function payCheckoutSession(id: string, input: PublicPaymentInput): Promise<PublicPaymentView> {
  const session = await getPublicCheckoutSession(id);
  if (session.status !== 'OPEN') throw notOpen(session.status);
  checkOfferedMethod(session.methods, input.payment_method);
  const paymentInput: CreatePaymentIntentInput = {
    amount: session.amount,
    currency: 'AOA',
    payment_method: input.payment_method,
    customer: input.customer ?? null,
    merchant_reference: session.merchant_reference,
  };
  // Refused requests never hold the session: the checks the payments core would make come first.
  validateCreateInput(paymentInput, 'checkout');

  const paymentId = newId('pay');
  await claimSession(session, paymentId);
  const actor = { accountId: session.account_id, apiKeyId: null };
  let intent;
  try {
    intent = await createPaymentIntent(actor, paymentInput, { via: { checkoutSessionId: session._id }, paymentId });
  } catch (err) {
    // An ApiError is thrown before anything is written: give the session back now. Any other failure
    // may have written the payment all the same (a lost acknowledgement), so the claim stays until the
    // stale-claim repair has looked for it.
    if (isApiError(err)) await releaseCheckoutClaim(session._id, paymentId);
    throw err;
  }
  await confirmClaim(session, paymentId);
  return toPublicPaymentView(intent);
}

function notOpen(status: string): ApiError {
  return ApiError.alreadyProcessed(`This checkout session is ${status} and can no longer be paid`);
}

function inProgress(): ApiError {
  return ApiError.alreadyProcessed('A payment of this checkout session is already in progress; wait for its outcome');
}

/** Takes the session for `paymentId`, or throws 409 saying why it cannot be paid now. */
async function claimSession(session: CheckoutSessionRecord, paymentId: string): Promise<void> {
  // Each pass either claims, fails for good, or has just freed a claim that can never succeed: a
  // couple of passes suffice unless others keep winning, and then 409 is the truth anyway.
  for (let attempt = 0; attempt < 3; attempt++) {
    const now = await nowForAccount(session.account_id);
    const claimed = await CheckoutSessionModel.updateOne(
      { _id: session._id, status: 'OPEN', expires_at: { $gt: now }, active_payment_id: null },
      { $set: { active_payment_id: paymentId, active_payment_claimed_at: new Date(), claim_abandoned: false } },
    );
    if (claimed.modifiedCount === 1) return;

    // Lost: find out why.
    const current = await CheckoutSessionModel.findById(session._id, {
      status: 1,
      expires_at: 1,
      active_payment_id: 1,
      active_payment_claimed_at: 1,
    }).lean<CheckoutSessionRecord>();
    if (!current) throw ApiError.notFound('checkout_session', session._id);
    if (current.status !== 'OPEN') throw notOpen(current.status);
    if (current.expires_at.getTime() <= now.getTime()) {
      await expireCheckoutSession(session._id, now);
      throw notOpen('EXPIRED');
    }
    const holder = current.active_payment_id;
    if (holder && !(await freeEndedClaim(current, holder))) throw inProgress();
  }
  throw inProgress();
}

/**
 * Gives back a claim whose payment can no longer be paid; false while it may still be (in flight,
 * paid but the session not completed yet, or not inserted yet by a live claimant).
 */
async function freeEndedClaim(session: CheckoutSessionRecord, holder: string): Promise<boolean> {
  const payment = await PaymentModel.findById(holder, { status: 1 }).lean<Pick<PaymentRecord, 'status'>>();
  if (payment) {
    if (PAID_STATUSES.includes(payment.status)) {
      throw ApiError.alreadyProcessed('This checkout session has already been paid');
    }
    // FAILED, CANCELLED and EXPIRED are final, so this look is not a check-then-act race: the release
    // hook would do the same, it just may not have run yet.
    if (!ENDED_UNPAID.includes(payment.status)) return false;
    await releaseCheckoutClaim(session._id, holder);
    return true;
  }
  const claimedAt = session.active_payment_claimed_at ? new Date(session.active_payment_claimed_at).getTime() : 0;
  if (Date.now() - claimedAt < CLAIM_STALE_MS) return false;
  return repairAbandonedClaim(session._id, holder);
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
  if (marked.matchedCount === 0) return true; // the claim changed meanwhile: try to claim again
  if (await PaymentModel.exists({ _id: holder })) return false;
  await releaseCheckoutClaim(id, holder);
  return true;
}

/**
 * After the insert: does the session still hold this payment's claim? Only the stale-claim repair takes
 * a claim from a payment that has not ended; then this payment must not run beside another, so it is
 * cancelled (its `payment.cancelled` hook gives back whatever is left of the claim) and the customer
 * gets the 409 the others got. A payment that already ended on its own needs nothing.
 */
async function confirmClaim(session: CheckoutSessionRecord, paymentId: string): Promise<void> {
  const held = await CheckoutSessionModel.exists({ _id: session._id, active_payment_id: paymentId, claim_abandoned: { $ne: true } });
  if (held) return;
  try {
    await cancelPaymentIntent(session.account_id, paymentId);
  } catch (err) {
    if (isApiError(err) && err.code === 'payment_already_processed') return;
    throw err;
  }
  throw inProgress();
}
