import { ApiError, isApiError } from '../../errors';
import { newId } from '../../ids';
import { nowForAccount } from '../clock/accountTime';
import { checkOfferedMethod, type PublicPaymentInput } from '../links/linkPaymentService';
import { cancelPaymentIntent, createPaymentIntent } from '../payments/paymentService';
import { toPublicPaymentView, type PublicPaymentView } from '../payments/paymentSerializer';
import { validateCreateInput, type CreatePaymentIntentInput } from '../payments/paymentValidation';
import { CheckoutSessionModel, type CheckoutSessionRecord } from './checkoutSessionModel';
import { inspectClaim, releaseCheckoutClaim } from './checkoutClaim';
import { expireCheckoutSession, getPublicCheckoutSession } from './checkoutSessionService';
import type { EventSink } from '../events/outbox';

/**
 * A payment on a checkout page: one session, at most one charge. The session is claimed for the intent's id
 * by one update conditional on it being OPEN, unexpired and unclaimed, before the intent exists, so of
 * concurrent attempts exactly one creates a payment and the others get 409; the claim is given back when that
 * payment ends unpaid. More: docs/decisions/notes/checkout.md, "One session, at most one charge".
 */
export async function payCheckoutSession(sink: EventSink, id: string, input: PublicPaymentInput): Promise<PublicPaymentView> {
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
    intent = await createPaymentIntent(sink, actor, paymentInput, { via: { checkoutSessionId: session._id }, paymentId });
  } catch (err) {
    // An ApiError is thrown before anything is written: give the session back now. Any other failure
    // may have written the payment all the same (a lost acknowledgement), so the claim stays until the
    // stale-claim repair has looked for it.
    if (isApiError(err)) await releaseCheckoutClaim(session._id, paymentId);
    throw err;
  }
  await confirmClaim(sink, session, paymentId);
  return toPublicPaymentView(intent);
}

function notOpen(status: string): ApiError {
  return ApiError.alreadyProcessed(`This checkout session is ${status} and can no longer be paid`);
}

function inProgress(): ApiError {
  return ApiError.alreadyProcessed('A payment of this checkout session is already in progress; wait for its outcome');
}

function pastDeadline(): ApiError {
  return ApiError.alreadyProcessed(
    'This checkout session can no longer start a payment (30 minutes have passed); it waits for the outcome of its reference payment',
  );
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
      // Past its 30 minutes: expired, or following the reference payment it holds; no new payment
      // either way (contract decisions).
      throw (await expireCheckoutSession(session._id, now)) ? notOpen('EXPIRED') : pastDeadline();
    }
    const holder = current.active_payment_id;
    if (!holder) continue;
    const state = await inspectClaim(current, holder);
    if (state === 'paid') throw ApiError.alreadyProcessed('This checkout session has already been paid');
    if (state !== 'freed') throw inProgress();
  }
  throw inProgress();
}

/**
 * After the insert: does the session still hold this payment's claim? Only the stale-claim repair takes
 * a claim from a payment that has not ended; then this payment must not run beside another, so it is
 * cancelled (its `payment.cancelled` hook gives back whatever is left of the claim) and the customer
 * gets the 409 the others got. A payment that already ended on its own needs nothing.
 */
async function confirmClaim(sink: EventSink, session: CheckoutSessionRecord, paymentId: string): Promise<void> {
  const held = await CheckoutSessionModel.exists({ _id: session._id, active_payment_id: paymentId, claim_abandoned: { $ne: true } });
  if (held) {
    // The session's expiry may have come while this payment was not inserted yet, and left the session
    // to it (inspectClaim: `unsettled`): now that it is readable, let the expiry decide (a reference
    // payment keeps the session; an express one does not).
    const now = await nowForAccount(session.account_id);
    if (session.expires_at.getTime() <= now.getTime()) await expireCheckoutSession(session._id, now);
    return;
  }
  try {
    await cancelPaymentIntent(sink, session.account_id, paymentId);
  } catch (err) {
    if (isApiError(err) && err.code === 'payment_already_processed') return;
    throw err;
  }
  throw inProgress();
}
