import { ApiError } from '../../errors';
import { newId } from '../../ids';
import { nowForAccount } from '../clock/clock';
import { buildEvents, dispatchOutbox } from '../events/outbox';
import { nextSequence } from '../events/sequence';
import { resolveMethods } from '../links/methodSelection';
import { publicBaseUrl } from '../links/publicUrls';
import { cancelTimers, scheduleTimer } from '../../jobs/timers/timer.service';
import { CheckoutSessionModel, type CheckoutSessionRecord } from './checkoutSession.model';
import { toCheckoutSessionResource } from './checkoutSession.serializer';

export interface CreateCheckoutSessionInput {
  amount: number;
  merchant_reference?: string | null;
  success_url?: string | null;
  cancel_url?: string | null;
  methods?: string[];
}

/** Spec: a checkout session is valid 30 minutes from creation. */
export const CHECKOUT_SESSION_TTL_MS = 30 * 60_000;
/** Durable timer that moves an unpaid session to EXPIRED (jobs/timers). */
export const CHECKOUT_EXPIRY_TIMER = 'checkout_session.expire';

export async function createCheckoutSession(accountId: string, input: CreateCheckoutSessionInput): Promise<CheckoutSessionRecord> {
  const methods = resolveMethods(input.methods, input.amount);
  const successUrl = webUrl('success_url', input.success_url);
  const cancelUrl = webUrl('cancel_url', input.cancel_url);
  const now = await nowForAccount(accountId);
  const record: CheckoutSessionRecord = {
    _id: newId('cs'),
    account_id: accountId,
    seq: await nextSequence('checkout_sessions'),
    amount: input.amount,
    currency: 'AOA',
    methods,
    status: 'OPEN',
    payment_intent: null,
    merchant_reference: input.merchant_reference ?? null,
    success_url: successUrl,
    cancel_url: cancelUrl,
    expires_at: new Date(now.getTime() + CHECKOUT_SESSION_TTL_MS),
    livemode: false,
    created_at: now,
    updated_at: now,
    pending_events: [],
    active_payment_id: null,
    active_payment_claimed_at: null,
    claim_abandoned: false,
  };
  await CheckoutSessionModel.create(record);
  // Due in account time, so a sandbox clock advance past 30 minutes expires the session.
  await scheduleTimer({
    accountId,
    kind: CHECKOUT_EXPIRY_TIMER,
    refId: record._id,
    dueAt: record.expires_at,
    dedupeKey: record._id,
  });
  return record;
}

/**
 * The page sends the customer to these URLs, so only absolute http(s) URLs are taken: a `javascript:`
 * or `data:` URI is a valid URI for the schema but would run script on the gateway's page.
 */
function webUrl(field: string, value: string | null | undefined): string | null {
  if (value === undefined || value === null) return null;
  let parsed: URL | undefined;
  try {
    parsed = new URL(value);
  } catch {
    parsed = undefined;
  }
  if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) {
    throw ApiError.invalid(`Invalid field '${field}': must be an absolute http(s) URL`);
  }
  return value;
}

/** A session of the account, never another's (404 either way). */
export async function getCheckoutSession(accountId: string, id: string): Promise<CheckoutSessionRecord> {
  const session = await CheckoutSessionModel.findOne({ _id: id, account_id: accountId }, { pending_events: 0 }).lean<CheckoutSessionRecord>();
  if (!session) throw ApiError.notFound('checkout_session', id);
  return settleExpiry(session);
}

/** The session behind a hosted page, by id alone (the id is the unguessable capability). */
export async function getPublicCheckoutSession(id: string): Promise<CheckoutSessionRecord> {
  const session = /^cs_[0-9A-Za-z]{24}$/.test(id)
    ? await CheckoutSessionModel.findOne({ _id: id }, { pending_events: 0 }).lean<CheckoutSessionRecord>()
    : null;
  if (!session) throw ApiError.notFound('checkout_session', id);
  return settleExpiry(session);
}

/**
 * An OPEN session past its expiry is EXPIRED even if its timer has not run yet (a busy or stopped timer
 * service must not let a customer pay a stale session). The write is the same conditional update the
 * timer makes, so the two agree.
 */
async function settleExpiry(session: CheckoutSessionRecord): Promise<CheckoutSessionRecord> {
  if (session.status !== 'OPEN') return session;
  const now = await nowForAccount(session.account_id);
  if (session.expires_at.getTime() > now.getTime()) return session;
  await expireCheckoutSession(session._id, now);
  const fresh = await CheckoutSessionModel.findById(session._id, { pending_events: 0 }).lean<CheckoutSessionRecord>();
  return fresh ?? session;
}

/** OPEN → EXPIRED once due. Idempotent: does nothing when the session was completed or already expired. */
export async function expireCheckoutSession(id: string, now: Date): Promise<boolean> {
  const res = await CheckoutSessionModel.updateOne(
    { _id: id, status: 'OPEN', expires_at: { $lte: now } },
    { $set: { status: 'EXPIRED', updated_at: now } },
  );
  return res.modifiedCount === 1;
}

/**
 * OPEN → COMPLETED when one of the session's payments succeeded. The state change and the
 * `checkout.session.completed` event (data: the session as completed) are one conditional write into
 * the session's outbox, so the event exists exactly when the completion does; a second call (the hook
 * is at-least-once) finds the session no longer OPEN and changes nothing.
 */
export async function completeCheckoutSession(accountId: string, id: string, paymentId: string, now: Date): Promise<boolean> {
  const session = await CheckoutSessionModel.findOne({ _id: id, account_id: accountId }, { pending_events: 0 }).lean<CheckoutSessionRecord>();
  if (!session || session.status !== 'OPEN') return false;
  const completed = { ...session, status: 'COMPLETED' as const, payment_intent: paymentId, updated_at: now };
  const events = await buildEvents(
    accountId,
    [{ type: 'checkout.session.completed', data: { ...toCheckoutSessionResource(completed, publicBaseUrl()) } }],
    now,
  );
  const res = await CheckoutSessionModel.updateOne(
    { _id: id, account_id: accountId, status: 'OPEN' },
    { $set: { status: 'COMPLETED', payment_intent: paymentId, updated_at: now }, $push: { pending_events: { $each: events } } },
  );
  if (res.modifiedCount !== 1) return false;
  await dispatchOutbox(CheckoutSessionModel, id);
  await cancelTimers({ accountId, kind: CHECKOUT_EXPIRY_TIMER, refId: id });
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
