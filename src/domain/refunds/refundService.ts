import { ApiError } from '../../errors';
import { newId } from '../../ids';
import type { Timer, TimerContext } from '../../platform/timers/timerService';
import { nowForAccount } from '../clock/accountTime';
import type { IdempotentAttempt } from '../idempotency/idempotencyService';
import { accountIdOf, type ActorOrAccount } from '../payments/actor';
import { PaymentModel, type PaymentRecord, type RefundRecord } from '../payments/paymentModel';
import { mutatePayment } from '../payments/paymentMutate';
import type { EventSink } from '../events/outbox';
import { planTransition, REFUNDABLE_STATUSES } from '../payments/paymentStates';
import { toRefundResource, type RefundResource } from './refundSerializer';

/**
 * Refunds live inside their payment intent. Creating one is a single conditional write on the intent
 * that checks what remains (amount − amount_reserved) and reserves the refund's amount, so concurrent
 * refunds can never exceed the payment; the same write carries its completion timer. About 3 s later
 * the timer completes it: refund SUCCEEDED,
 * `amount_refunded` and the intent's status updated and `refund.succeeded` emitted, again one write.
 */
export const REFUND_COMPLETION_MS = 3_000;
export const REFUND_TIMER_KIND = 'refund.complete';

export interface CreateRefundInput {
  payment_intent: string;
  /** Omitted = the whole remaining amount. */
  amount?: number | null;
}

function refundableCheck(p: PaymentRecord, requested: number | undefined): number {
  if (!REFUNDABLE_STATUSES.includes(p.status)) {
    throw ApiError.alreadyProcessed(`This payment is ${p.status}; only SUCCEEDED or PARTIALLY_REFUNDED payments can be refunded`);
  }
  const remaining = p.amount - (p.amount_reserved ?? 0);
  const amount = requested ?? remaining;
  if (amount < 1 || amount > remaining) {
    throw new ApiError(
      'amount_out_of_range',
      remaining > 0
        ? `Invalid field 'amount': at most ${remaining} AOA of this payment can still be refunded`
        : 'Nothing of this payment remains to be refunded',
    );
  }
  return amount;
}

/** `idempotency`: under an Idempotency-Key (runIdempotent), the refund gets the id the key reserved. */
export async function createRefund(sink: EventSink, actor: ActorOrAccount, input: CreateRefundInput, idempotency?: IdempotentAttempt): Promise<RefundResource> {
  const accountId = accountIdOf(actor);
  const requested = input.amount ?? undefined;
  if (requested !== undefined && (!Number.isSafeInteger(requested) || requested < 1)) {
    throw ApiError.invalid("Invalid field 'amount': must be an integer of at least 1");
  }
  if (typeof input.payment_intent !== 'string') throw ApiError.invalid("Missing required field 'payment_intent'");
  const existing = await PaymentModel.findOne({ _id: input.payment_intent, account_id: accountId }, { pending_events: 0 }).lean<PaymentRecord>();
  if (!existing) throw ApiError.notFound('payment_intent', input.payment_intent);
  // Under an Idempotency-Key the id is reserved by the key: a retry after a crash finds the refund.
  const reserved = idempotency?.objectId('rf');
  const already = reserved ? existing.refunds?.find((r) => r._id === reserved) : undefined;
  if (already) return toRefundResource(already, existing._id);
  refundableCheck(existing, requested); // early answer; checked again atomically below

  const id = reserved ?? newId('rf');
  const now = await nowForAccount(accountId);

  let refund: RefundRecord | undefined;
  await mutatePayment(
    sink,
    existing._id,
    (p, at) => {
      refund = p.refunds?.find((r) => r._id === id);
      if (refund) return null; // written by an earlier attempt of this request
      const amount = refundableCheck(p, requested);
      refund = { _id: id, amount, status: 'PENDING', created_at: at, updated_at: at };
      return {
        set: { amount_reserved: (p.amount_reserved ?? 0) + amount, refunds: [...(p.refunds ?? []), refund] },
        touch: false,
        // Its completion is written with the reservation: it cannot fire before the refund exists.
        timers: [
          {
            accountId,
            kind: REFUND_TIMER_KIND,
            refId: id,
            dueAt: new Date(at.getTime() + REFUND_COMPLETION_MS),
            payload: { payment_intent: p._id },
            dedupeKey: `refund:${id}`,
          },
        ],
      };
    },
    { accountId, now },
  );
  return toRefundResource(refund!, existing._id);
}

export async function runRefundCompletion(sink: EventSink, timer: Timer, ctx: TimerContext): Promise<void> {
  const paymentId = String(timer.payload.payment_intent ?? '');
  const exists = await PaymentModel.exists({ _id: paymentId, 'refunds._id': timer.refId });
  if (!exists) return; // the creation never reserved it
  await mutatePayment(
    sink,
    paymentId,
    (p, now) => {
      const refund = p.refunds.find((r) => r._id === timer.refId);
      if (!refund || refund.status === 'SUCCEEDED') return null;
      const refunded = p.amount_refunded + refund.amount;
      const plan = planTransition('refund_complete', {
        status: p.status,
        method: p.payment_method,
        wholeAmountRefunded: refunded >= p.amount,
      });
      if (!plan.allowed) throw new Error(`refund ${refund._id} cannot complete: ${plan.reason}`);
      const done: RefundRecord = { ...refund, status: 'SUCCEEDED', updated_at: now };
      return {
        set: {
          status: plan.to,
          amount_refunded: refunded,
          refunds: p.refunds.map((r) => (r._id === refund._id ? done : r)),
        },
        events: plan.events.map((type) => ({ type, data: { ...toRefundResource(done, p._id) } })),
      };
    },
    { now: ctx.now },
  );
}

export async function getRefund(actor: ActorOrAccount, refundId: string): Promise<RefundResource> {
  const accountId = accountIdOf(actor);
  const p = await PaymentModel.findOne({ 'refunds._id': refundId, account_id: accountId }, { refunds: 1 }).lean<PaymentRecord>();
  const refund = p?.refunds.find((r) => r._id === refundId);
  if (!p || !refund) throw ApiError.notFound('refund', refundId);
  return toRefundResource(refund, p._id);
}

/** Refunds of one intent, oldest first. */
export async function listRefundsForPayment(actor: ActorOrAccount, paymentId: string): Promise<RefundResource[]> {
  const p = await PaymentModel.findOne({ _id: paymentId, account_id: accountIdOf(actor) }, { refunds: 1 }).lean<PaymentRecord>();
  if (!p) throw ApiError.notFound('payment_intent', paymentId);
  return (p.refunds ?? []).map((r) => toRefundResource(r, p._id));
}

/** An intent's refunds, oldest first, from its stored record (they live inside it). */
export function refundsOf(p: Pick<PaymentRecord, '_id' | 'refunds' | 'livemode'>): RefundResource[] {
  return (p.refunds ?? []).map((r) => toRefundResource(r, p._id, p.livemode ?? false));
}
