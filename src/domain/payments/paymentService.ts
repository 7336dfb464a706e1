import { ApiError } from '../../errors';
import { newId } from '../../ids';
import { cancelTimers } from '../../platform/timers/timerService';
import { findByIdBatched, insertBatched } from '../../db/batching';
import { accountNow, readAccountClock } from '../clock/accountTime';
import { buildEvents, buildTimers, storeKnown, type EventSink, type TimerSpec } from '../events/outbox';
import { nextSequence } from '../events/sequence';
import { SequenceModel } from '../events/eventModel';
import { driverCollection } from '../../db/driverCollection';
import { isDuplicateKey } from '../../db/errors';
import type { IdempotentAttempt } from '../idempotency/idempotencyService';
import { accountIdOf, type Actor, type ActorOrAccount } from './actor';
import type { MethodChannel } from './methods';
import { PaymentModel, type PaymentRecord } from './paymentModel';
import { paymentCreated } from '../overview/rollupWrites';
import type { AccountClock } from '../accounts/accountModel';
import { mutatePayment } from './paymentMutate';
import { toPaymentIntentResource, type PaymentIntentResource } from './paymentSerializer';
import { isPaymentStatus, type PaymentStatus } from './paymentStates';
import { validateCreateInput, type CreatePaymentIntentInput } from './paymentValidation';
import { railStepTimer, transitionChange } from './rail';
import { paymentCreated as paymentCreatedMetric } from '../../metrics/domain';
import { drawReferenceNumber, isReferenceNumberConflict, REFERENCE_VALIDITY_MS, referenceExpiryTimer } from './reference';

export interface CreatePaymentOptions {
  /** Payments made on a payment-link or checkout page (the actor's apiKeyId is then null). */
  via?: { paymentLinkId?: string; checkoutSessionId?: string };
  /** Under an Idempotency-Key (runIdempotent): the intent gets the id the key reserved. */
  idempotency?: IdempotentAttempt;
  /** An id chosen beforehand: a checkout session's claim names its payment before the payment exists. */
  paymentId?: string;
  /** The account's clock as this request read it moments ago (its authentication's count): not read again. */
  account?: AccountClock;
  /** The payment's number, reserved beforehand (reservePaymentNumber): beside the Idempotency-Key's claim. */
  paymentNumber?: Promise<number>;
}

/**
 * Creates an intent in PENDING with `payment.created` and its first timer (rail step or reference
 * expiry) in its outbox, in one insert: no payment without its timer, no timer before its payment.
 */
export async function createPaymentIntent(
  sink: EventSink,
  actor: Actor,
  input: CreatePaymentIntentInput,
  opts: CreatePaymentOptions = {},
): Promise<PaymentIntentResource> {
  const channel: MethodChannel = opts.via?.checkoutSessionId ? 'checkout' : opts.via?.paymentLinkId ? 'link' : 'api';
  const valid = validateCreateInput(input, channel);
  const metadata = { ...valid.metadata };
  if (opts.via?.paymentLinkId) metadata.payment_link = opts.via.paymentLinkId;
  if (opts.via?.checkoutSessionId) metadata.checkout_session = opts.via.checkoutSessionId;

  // Under an Idempotency-Key the id is reserved by the key: a retry after a crash finds the payment.
  // A checkout claim reserves it the same way (checkoutPaymentService.ts).
  const reserved = opts.idempotency?.objectId('pay') ?? opts.paymentId;
  // Only a retry of an attempt that did not finish can find the payment already written.
  if (reserved && opts.idempotency?.resumed) {
    const existing = await PaymentModel.findOne({ _id: reserved, account_id: actor.accountId }, { pending_events: 0 }).lean<PaymentRecord>();
    if (existing) return toPaymentIntentResource(existing);
  }
  const id = reserved ?? newId('pay');
  const isReference = valid.payment_method === 'multicaixa_reference';
  // Independent reads and reservations side by side: a request's latency is its number of sequential
  // database round trips (each shared with concurrent requests, src/db/batching.ts).
  const [account, firstEventSeq] = await Promise.all([opts.account ?? readAccountClock(actor.accountId), reservedOrNew(opts.paymentNumber)]);
  if (!account) throw ApiError.notFound('account', actor.accountId);
  // The payment's place in its account's list is the number of its `payment.created` event: unique and
  // increasing like the events' counter it comes from, and one reservation (findAndModify) instead of two.
  const seq = firstEventSeq;
  const now = accountNow(account.clock_offset_ms ?? 0);

  let reference: PaymentRecord['reference'] = null;
  const timers: TimerSpec[] = [];
  if (isReference) {
    const expiresAt = new Date(now.getTime() + REFERENCE_VALIDITY_MS);
    reference = { entity: account.reference_entity, number: drawReferenceNumber(), expires_at: expiresAt };
    timers.push(referenceExpiryTimer(actor.accountId, id, expiresAt));
  }

  const record: PaymentRecord = {
    _id: id,
    account_id: actor.accountId,
    seq,
    version: 0,
    amount: valid.amount,
    currency: 'AOA',
    payment_method: valid.payment_method,
    status: 'PENDING',
    failure_code: null,
    customer: valid.customer,
    merchant_reference: valid.merchant_reference,
    ...(valid.merchant_reference != null && { merchant_reference_folded: valid.merchant_reference.toLowerCase() }),
    reference,
    amount_refunded: 0,
    amount_reserved: 0,
    fee: null,
    fee_version: null,
    api_key_id: actor.apiKeyId,
    metadata,
    livemode: false,
    payment_link_id: opts.via?.paymentLinkId ?? null,
    checkout_session_id: opts.via?.checkoutSessionId ?? null,
    refunds: [],
    succeeded_at: null,
    pending_events: [],
    pending_timers: [],
    event_count: 1,
    created_at: now,
    updated_at: now,
  };
  if (valid.payment_method === 'multicaixa_express') timers.push(railStepTimer(record, 0, record.version)!);
  record.pending_timers = buildTimers(timers);

  let resource = toPaymentIntentResource(record);
  record.pending_events = await buildEvents(actor.accountId, [{ type: 'payment.created', data: resource, paymentId: id, sequence: 1 }], now, firstEventSeq);
  for (let attempt = 1; ; attempt++) {
    try {
      // The record is complete and typed: the driver's insert (batched with concurrent creations)
      // rather than mongoose's document layer, which was ~17 % of this request's CPU.
      await insertBatched(PaymentModel, record);
      break;
    } catch (err) {
      if (reference && isReferenceNumberConflict(err) && attempt < 20) {
        // Another intent holds this number: draw again (the event carries the number too).
        reference.number = drawReferenceNumber();
        resource = toPaymentIntentResource(record);
        record.pending_events[0]!.data_json = JSON.stringify(resource);
        continue;
      }
      if (!reserved || !isDuplicateKey(err)) throw err;
      return getPaymentIntentForAccount(actor.accountId, id);
    }
  }
  paymentCreatedMetric(record.payment_method).inc();
  // The overview's count, beside the outbox's dispatch (and under an Idempotency-Key, the answer's storing).
  const rollup = paymentCreated(record);
  const { cleared } = await storeKnown(sink, PaymentModel, id, record.pending_events, record.pending_timers, {
    accountOffsetMs: account.clock_offset_ms ?? 0,
    eventData: [resource as unknown as Record<string, unknown>],
  });
  // Under an Idempotency-Key the outbox is cleared while the answer is stored (answered after both).
  if (opts.idempotency) opts.idempotency.answerAfter(Promise.all([rollup, cleared]));
  else await cleared;
  return resource;
}

/**
 * The number of a new payment's `payment.created` event, which is also the payment's `seq`.
 * Data directories may hold payments numbered from the old `sequences` `payment_intents` counter, which
 * a crash could leave one ahead of the events' counter: once per database and process the events'
 * counter is raised to at least it ($max), so new payments always list after the old ones.
 * It may be reserved ahead of the payment's creation (src/operations/prefetch.ts): a number reserved
 * and not used (the Idempotency-Key's claim found an answer to replay, or the body was invalid) is a gap,
 * which the numbers of payments and events may have.
 */
export async function reservePaymentNumber(): Promise<number> {
  const db = SequenceModel.db.db;
  let caughtUp = db && eventCounterCaughtUp.get(db);
  if (db && !caughtUp) {
    caughtUp = catchUpEventCounter();
    eventCounterCaughtUp.set(db, caughtUp);
    caughtUp.catch(() => eventCounterCaughtUp.delete(db));
  }
  await caughtUp;
  return nextSequence('events');
}

// eslint-disable-next-line no-restricted-syntax -- keyed by the database: once per database, whichever gateway asks
const eventCounterCaughtUp = new WeakMap<object, Promise<void>>();

async function catchUpEventCounter(): Promise<void> {
  const sequences = driverCollection<{ _id: string; value: number }>(SequenceModel);
  const old = await sequences.findOne({ _id: 'payment_intents' });
  if (old) await sequences.updateOne({ _id: 'events' }, { $max: { value: old.value } }, { upsert: true });
}

/**
 * A payment by id, whatever its account (batched with concurrent reads). The whole document, outbox
 * fields and all (empty once dispatched): without a projection the embedded engine copies the stored
 * bytes into its reply instead of decoding, projecting and encoding them again.
 */
export function readPaymentById(id: string): Promise<PaymentRecord | null> {
  return findByIdBatched<PaymentRecord>(PaymentModel, id);
}

/**
 * `started`: the same read, already started (src/operations/prefetch.ts). Another account's intent is
 * answered exactly like a missing one.
 */
export async function getPaymentIntentForAccount(accountId: string, id: string, started?: Promise<PaymentRecord | null>): Promise<PaymentIntentResource> {
  let p = started ? await started : await readPaymentById(id);
  // A read ahead of another id (it cannot be: both come from the same path) is not trusted: read again.
  if (started && p && p._id !== id) p = await readPaymentById(id);
  if (!p || p.account_id !== accountId) throw ApiError.notFound('payment_intent', id);
  return toPaymentIntentResource(p);
}

export function getPaymentIntent(actor: ActorOrAccount, id: string, started?: Promise<PaymentRecord | null>): Promise<PaymentIntentResource> {
  return getPaymentIntentForAccount(accountIdOf(actor), id, started);
}

/**
 * Batch read (DataLoader): the account's stored intents among `ids`, in their order; null for an unknown
 * or foreign id. Read by id with the other requests of the same turn (readPaymentById).
 */
export function readPaymentsOfAccount(accountId: string, ids: readonly string[]): Promise<Array<PaymentRecord | null>> {
  return Promise.all(ids.map(async (id) => {
    const p = await readPaymentById(id);
    return p && p.account_id === accountId ? p : null;
  }));
}

/**
 * The stored intent whatever its account, for the public pages and stream (which check
 * `payment_link_id` / `checkout_session_id` themselves). Null when there is none.
 */
export async function findPaymentRecord(id: string): Promise<PaymentRecord | null> {
  return PaymentModel.findById(id).lean<PaymentRecord>();
}

export interface ListPaymentIntentsOptions {
  limit: number;
  status?: string;
  /** An intent id: list the ones created before it. */
  startingAfter?: string;
}

/** Newest first, in the stable creation order. */
export async function listPaymentIntents(actor: ActorOrAccount, opts: ListPaymentIntentsOptions): Promise<PaymentIntentResource[]> {
  const accountId = accountIdOf(actor);
  const filter: Record<string, unknown> = { account_id: accountId };
  if (opts.status !== undefined) {
    if (!isPaymentStatus(opts.status)) throw ApiError.invalid(`Invalid query parameter 'status': unknown status '${opts.status}'`);
    filter.status = opts.status satisfies PaymentStatus;
  }
  if (opts.startingAfter !== undefined) {
    const cursor = await PaymentModel.findOne({ _id: opts.startingAfter, account_id: accountId }, { seq: 1 }).lean();
    if (!cursor) throw ApiError.invalid(`Invalid query parameter 'starting_after': no such payment_intent '${opts.startingAfter}'`);
    filter.seq = { $lt: cursor.seq };
  }
  const docs = await PaymentModel.find(filter, { pending_events: 0 }).sort({ seq: -1 }).limit(opts.limit).lean<PaymentRecord[]>();
  return docs.map(toPaymentIntentResource);
}

/** PENDING or PROCESSING → CANCELLED with `payment.cancelled`; any other state: 409, nothing changes. */
export async function cancelPaymentIntent(sink: EventSink, actor: ActorOrAccount, id: string): Promise<PaymentIntentResource> {
  const accountId = accountIdOf(actor);
  const { payment } = await mutatePayment(
    sink,
    id,
    (p, now) => {
      const change = transitionChange(p, 'cancel', now);
      if (!change) throw ApiError.alreadyProcessed(`This payment is ${p.status}; only PENDING or PROCESSING payments can be cancelled`);
      return change;
    },
    { accountId },
  );
  // Pending rail steps or expiry would find the payment cancelled and do nothing; drop them anyway.
  await cancelTimers({ accountId, refId: id });
  return toPaymentIntentResource(payment);
}

/**
 * The number reserved beside the key's claim, or a new one when that reservation failed: it may have
 * been refused well before this request's turn came (a full disk while the request waited for its key),
 * and a refusal then is no reason to refuse now. A failed reservation used no number.
 */
function reservedOrNew(reserved: Promise<number> | undefined): Promise<number> {
  return reserved ? reserved.catch(() => reservePaymentNumber()) : reservePaymentNumber();
}
