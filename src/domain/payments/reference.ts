import { ApiError } from '../../errors';
import { randomDigits } from '../../ids';
import type { Timer, TimerContext } from '../../platform/timers/timerService';
import type { TimerSpec } from '../events/outbox';
import { isDuplicateKey } from '../../db/errors';
import { accountIdOf, type ActorOrAccount } from './actor';
import { PaymentModel } from './paymentModel';
import { mutatePayment } from './paymentMutate';
import type { EventSink } from '../events/outbox';
import { toPaymentIntentResource, type PaymentIntentResource } from './paymentSerializer';
import { transitionChange } from './rail';

/** Multicaixa references: 9-digit numbers valid for 72 h, paid in the sandbox through the simulate endpoint. */
export const REFERENCE_VALIDITY_MS = 72 * 60 * 60 * 1000;
export const REFERENCE_EXPIRY_TIMER_KIND = 'payment.reference_expiry';

/**
 * A 9-digit reference number, drawn at random. Uniqueness is the unique index on
 * `payment_intents.reference.number`: the intent's insert fails on a collision (rare: 9·10^8
 * numbers) and the creation draws again (isReferenceNumberConflict).
 */
export function drawReferenceNumber(): string {
  // No leading zero, so the number survives being typed into a numeric field.
  return String(1 + (Number(randomDigits(1)) % 9)) + randomDigits(8);
}

/** A duplicate-key error raised by the reference number index (not by the intent's `_id`). */
export function isReferenceNumberConflict(err: unknown): boolean {
  if (!isDuplicateKey(err)) return false;
  const e = err as { keyPattern?: Record<string, unknown>; message?: string; errmsg?: string };
  if (e.keyPattern) return 'reference.number' in e.keyPattern;
  return /reference\.number/.test(e.message ?? e.errmsg ?? '');
}

export function referenceExpiryTimer(accountId: string, paymentId: string, expiresAt: Date): TimerSpec {
  return { accountId, kind: REFERENCE_EXPIRY_TIMER_KIND, refId: paymentId, dueAt: expiresAt, dedupeKey: `expire:${paymentId}` };
}

export async function runReferenceExpiry(sink: EventSink, timer: Timer, ctx: TimerContext): Promise<void> {
  try {
    await mutatePayment(
      sink,
      timer.refId,
      (p, now) => {
        // Only at expiry, whatever fired the timer.
        if (!p.reference || now.getTime() < new Date(p.reference.expires_at).getTime()) return null;
        return transitionChange(p, 'reference_expire', now);
      },
      { now: ctx.now },
    );
  } catch (err) {
    if (err instanceof ApiError && err.code === 'resource_not_found') return;
    throw err;
  }
}

/**
 * POST /sandbox/simulate/reference_paid: the customer pays the reference. PENDING → SUCCEEDED with
 * `reference.paid` then `payment.succeeded`, in one atomic write; any other state (or an expired
 * reference) is 409 and changes nothing. An unknown number, or another account's, is 404.
 */
export async function simulateReferencePaid(sink: EventSink, actor: ActorOrAccount, reference: string): Promise<PaymentIntentResource> {
  const accountId = accountIdOf(actor);
  const notFound = ApiError.notFound('reference', reference);
  if (typeof reference !== 'string' || !/^\d{9}$/.test(reference)) throw notFound;
  const holder = await PaymentModel.findOne({ 'reference.number': reference }, { account_id: 1 }).lean<{ _id: string; account_id: string }>();
  if (!holder || holder.account_id !== accountId) throw notFound;
  const { payment } = await mutatePayment(
    sink,
    holder._id,
    (p, now) => {
      if (p.reference && now.getTime() >= new Date(p.reference.expires_at).getTime()) {
        throw ApiError.alreadyProcessed('This reference has expired');
      }
      const change = transitionChange(p, 'reference_paid', now);
      if (!change) throw ApiError.alreadyProcessed(`This payment is ${p.status}; only PENDING references can be paid`);
      return change;
    },
    { accountId },
  );
  return toPaymentIntentResource(payment);
}
