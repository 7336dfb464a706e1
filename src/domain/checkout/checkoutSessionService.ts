import { ApiError } from '../../errors';
import { newId } from '../../ids';
import { nowForAccount } from '../clock/accountTime';
import { buildEvents, dispatchOutbox, type EventSink } from '../events/outbox';
import { nextSequence } from '../events/sequence';
import { resolveMethods } from '../links/methodSelection';
import { cancelTimers, scheduleTimer } from '../../platform/timers/timerService';
import { inspectClaim } from './checkoutClaim';
import { CheckoutSessionModel, type CheckoutSessionRecord } from './checkoutSessionModel';
import { toCheckoutSessionResource } from './checkoutSessionSerializer';

export interface CreateCheckoutSessionInput {
  amount: number;
  merchant_reference?: string | null;
  success_url?: string | null;
  cancel_url?: string | null;
  methods?: string[];
}

/** Spec: a checkout session is valid 30 minutes from creation. */
export const CHECKOUT_SESSION_TTL_MS = 30 * 60_000;
/** Durable timer that moves an unpaid session to EXPIRED (src/platform/timers). */
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
 * service must not let a customer pay a stale session), unless it follows a payment. The write is the
 * one the timer makes (expireCheckoutSession), so the two agree.
 */
async function settleExpiry(session: CheckoutSessionRecord): Promise<CheckoutSessionRecord> {
  if (session.status !== 'OPEN') return session;
  const now = await nowForAccount(session.account_id);
  if (session.expires_at.getTime() > now.getTime()) return session;
  await expireCheckoutSession(session._id, now);
  const fresh = await CheckoutSessionModel.findById(session._id, { pending_events: 0 }).lean<CheckoutSessionRecord>();
  return fresh ?? session;
}

/**
 * OPEN → EXPIRED once due, except while the session follows a PENDING reference payment or a paid one whose
 * completion has not run (contract decisions). Every write is conditional on OPEN and on the claim it read,
 * so it never races the completion or a new claim. Idempotent; true when this call expired the session. More:
 * docs/decisions/notes/checkout.md, "expireCheckoutSession".
 */
export async function expireCheckoutSession(id: string, now: Date): Promise<boolean> {
  const due = { _id: id, status: 'OPEN' as const, expires_at: { $lte: now } };
  const expire = { $set: { status: 'EXPIRED' as const, updated_at: now } };
  // A pass either expires, finds a reason to leave the session, or has just given back a claim that
  // could not be paid any more: a couple of passes suffice.
  for (let pass = 0; pass < 3; pass++) {
    const unclaimed = await CheckoutSessionModel.updateOne({ ...due, active_payment_id: null }, expire);
    if (unclaimed.modifiedCount === 1) return true;
    const current = await CheckoutSessionModel.findOne(due, { active_payment_id: 1, active_payment_claimed_at: 1 }).lean<CheckoutSessionRecord>();
    if (!current) return false; // not OPEN any more, or not due
    const holder = current.active_payment_id;
    if (!holder) continue; // given back meanwhile
    const state = await inspectClaim(current, holder);
    if (state === 'freed') continue;
    if (state !== 'in_flight') return false; // the session follows its payment
    const claimed = await CheckoutSessionModel.updateOne({ ...due, active_payment_id: holder }, expire);
    if (claimed.modifiedCount === 1) return true;
  }
  return false;
}

/**
 * OPEN → COMPLETED when one of the session's payments succeeded. The state change and the
 * `checkout.session.completed` event (data: the session as completed) are one conditional write into
 * the session's outbox, so the event exists exactly when the completion does; a second call (the hook
 * is at-least-once) finds the session no longer OPEN and changes nothing.
 */
export async function completeCheckoutSession(sink: EventSink, accountId: string, id: string, paymentId: string, now: Date, publicBaseUrl: string): Promise<boolean> {
  const session = await CheckoutSessionModel.findOne({ _id: id, account_id: accountId }, { pending_events: 0 }).lean<CheckoutSessionRecord>();
  if (!session || session.status !== 'OPEN') return false;
  const completed = { ...session, status: 'COMPLETED' as const, payment_intent: paymentId, updated_at: now };
  const events = await buildEvents(
    accountId,
    [{ type: 'checkout.session.completed', data: { ...toCheckoutSessionResource(completed, publicBaseUrl) } }],
    now,
  );
  const res = await CheckoutSessionModel.updateOne(
    { _id: id, account_id: accountId, status: 'OPEN' },
    { $set: { status: 'COMPLETED', payment_intent: paymentId, updated_at: now }, $push: { pending_events: { $each: events } } },
  );
  if (res.modifiedCount !== 1) return false;
  await dispatchOutbox(sink, CheckoutSessionModel, id);
  await cancelTimers({ accountId, kind: CHECKOUT_EXPIRY_TIMER, refId: id });
  return true;
}

/** At most this many overdue sessions are settled by one listing (the timers settle the rest). */
const SETTLE_ON_LIST_MAX = 100;

/**
 * The account's sessions, newest first (the dashboard's list; REST has none), `status` keeping one
 * status. OPEN sessions already past their expiry are settled first (their timer may not have run), so
 * that the status filter and the rows agree: usually none are, and the look-up costs one index probe.
 */
export async function listCheckoutSessions(
  accountId: string,
  opts: { limit: number; status?: CheckoutSessionRecord['status'] | null; startingAfter?: string | null },
): Promise<CheckoutSessionRecord[]> {
  const now = await nowForAccount(accountId);
  const overdue = await CheckoutSessionModel.find({ account_id: accountId, status: 'OPEN', expires_at: { $lte: now } }, { _id: 1 })
    .limit(SETTLE_ON_LIST_MAX)
    .lean<Array<{ _id: string }>>();
  for (const s of overdue) await expireCheckoutSession(s._id, now);
  const filter: Record<string, unknown> = { account_id: accountId };
  if (opts.status) filter.status = opts.status;
  if (opts.startingAfter) {
    const cursor = await CheckoutSessionModel.findOne({ _id: opts.startingAfter, account_id: accountId }, { seq: 1 }).lean<{ seq: number }>();
    if (!cursor) throw ApiError.invalid(`No checkout session '${opts.startingAfter}' to page on from`);
    filter.seq = { $lt: cursor.seq };
  }
  return CheckoutSessionModel.find(filter, { pending_events: 0 }).sort({ seq: -1 }).limit(opts.limit).lean<CheckoutSessionRecord[]>();
}
