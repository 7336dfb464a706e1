import { updateOneBatched } from '../../db/batching';
import { logger } from '../../logger';
import { webhookAttempt, webhookDeadLetter, webhookDelivered } from '../../metrics/domain';
import { scheduleTimer } from '../../platform/timers/timerService';
import { deliveryMoved } from '../overview/rollupWrites';
import { attemptEntry, attemptError } from './attemptFailure';
import type { DeliveryEngine } from './deliveryEngine';
import { applyDeliveryTransition } from './deliveryTransition';
import { signatureHeaders, signNow, type Signing } from './signature';
import { ATTEMPT_LOG_SIZE, WebhookDeliveryModel, type WebhookDeliveryRecord } from './webhookDeliveryModel';
import type { WebhookEndpointRecord } from './webhookEndpointModel';
import { activeSecrets, RETRY_TIMER_KIND } from './webhookEndpointService';
import { postWebhook, type AttemptOutcome } from './webhookHttp';

/*
 * One attempt of a delivery: the signed request, and its outcome recorded as the state table says
 * (deliveryStates.ts). Apart from deliveryService.ts, which decides when an attempt is made (queues,
 * leases, timers, holds): this is what every attempt does, whoever made it.
 */

export const RETRY_DELAYS_MS = [10_000, 60_000, 5 * 60_000] as const;
export const MAX_SCHEDULED_ATTEMPTS = RETRY_DELAYS_MS.length + 1;
const USER_AGENT = 'PaymentGatewaySandbox-Webhooks/1.0';

export interface SentAttempt extends AttemptOutcome {
  header: string;
  /** Every header of the request (the delivery detail shows them). */
  headers: Record<string, string>;
  at: Date;
}

/**
 * Signs with the endpoint's current secrets now (or as `signing` says, a chaos copy's) and POSTs the
 * stored body. `at` is the account time.
 */
export async function send(
  e: DeliveryEngine,
  d: WebhookDeliveryRecord,
  endpoint: WebhookEndpointRecord,
  at: Date,
  signing: Signing = signNow(activeSecrets(endpoint, at)),
): Promise<SentAttempt> {
  const signatures = signatureHeaders(d.event_id, d.body, signing);
  const header = signatures['Service-Signature'];
  const headers = {
    'Content-Type': 'application/json',
    'User-Agent': USER_AGENT,
    ...signatures,
    'Service-Event-Id': d.event_id,
  };
  // A pull endpoint has no deliveries; one that became one cannot be sent to.
  if (endpoint.url === null) return { status: 0, ms: 0, error: 'pull endpoint: nothing is sent', header, headers, at };
  const outcome = await postWebhook(endpoint.url, d.body, headers, { policy: e.policy, agents: e.agents, traceParent: d.trace_parent });
  if (outcome.error) logger.debug({ deliveryId: d._id, endpointId: d.endpoint_id, reason: outcome.error }, 'webhook attempt got no response');
  webhookAttempt[succeeded(outcome.status) ? 'delivered' : outcome.status === 0 ? 'no_response' : 'http_error'].inc();
  return { ...outcome, header, headers, at };
}

/** What every attempt records, whatever the delivery's state: its outcome and, when it failed, why. */
function attemptFields(a: SentAttempt) {
  return { last_status: a.status, last_ms: a.ms, last_attempt_at: a.at, signature_header: a.header, last_error: attemptError(a.status, a.error), request_headers: a.headers };
}

/** The update operator appending an attempt to the log, keeping its newest ATTEMPT_LOG_SIZE. */
const pushAttempt = (a: AttemptOutcome & { at: Date }) => ({ attempt_log: { $each: [attemptEntry(a)], $slice: -ATTEMPT_LOG_SIZE } });

const succeeded = (status: number) => status >= 200 && status < 300;

/** Records scheduled attempt `step` (1..4), as performScheduledAttempt (deliveryService.ts) says. */
export async function recordAttempt(e: DeliveryEngine, d: WebhookDeliveryRecord, step: number, at: Date, a: SentAttempt): Promise<void> {
  const ok = succeeded(a.status);
  const retryDelay = RETRY_DELAYS_MS[step - 1];
  const nextAt = !ok && retryDelay !== undefined ? new Date(at.getTime() + retryDelay) : null;
  if (nextAt) {
    await scheduleTimer({
      accountId: d.account_id,
      kind: RETRY_TIMER_KIND,
      refId: d.endpoint_id,
      dueAt: nextAt,
      payload: { delivery_id: d._id, step: step + 1 },
      dedupeKey: `${d._id}:${step + 1}`,
      timers: e.timers,
    });
  }
  const state = ok ? 'DELIVERED' : nextAt ? 'RETRYING' : 'DEAD_LETTER';
  if (state !== 'RETRYING') return recordFinalAttempt(d, step, at, a, state);
  // One atomic write whose outcome nobody waits on, so it is batched with the other attempts of this
  // turn: the attempt is always recorded; the state moves only if the delivery has not moved on
  // meanwhile (delivered by a manual retry, or this step already recorded). A pipeline update decides
  // that on the stored document (deliveryTransition.ts).
  await applyDeliveryTransition(
    'retry_scheduled',
    {
      id: d._id,
      where: { step: { $lt: step } },
      record: {
        ...Object.fromEntries(Object.entries(attemptFields(a)).map(([k, v]) => [k, { $literal: v }])),
        attempts: { $add: ['$attempts', 1] },
        attempt_log: { $slice: [{ $concatArrays: [{ $ifNull: ['$attempt_log', []] }, { $literal: [attemptEntry(a)] }] }, -ATTEMPT_LOG_SIZE] },
      },
      set: { step, next_attempt_at: nextAt, lease_until: 0 },
    },
    'recorded',
  );
}

/**
 * The attempt that delivers or dead-letters: the same decision as for a retry, but the overview's counts
 * move only if the state did, so the write must say whether it applied (batched all the same). A miss
 * (the delivery moved on meanwhile) records the attempt alone.
 */
async function recordFinalAttempt(d: WebhookDeliveryRecord, step: number, at: Date, a: SentAttempt, state: 'DELIVERED' | 'DEAD_LETTER'): Promise<void> {
  const delivered = state === 'DELIVERED';
  const moved = await applyDeliveryTransition(
    delivered ? 'attempt_delivered' : 'attempts_exhausted',
    {
      id: d._id,
      where: { step: { $lt: step } },
      record: attemptFields(a),
      set: { step, next_attempt_at: null, lease_until: 0, ...(delivered && { delivered_at: at }) },
      inc: { attempts: 1 },
      push: pushAttempt(a),
    },
    'ifMatch',
  );
  // Lag in account time, from the event's creation to this attempt's answer (older deliveries lack the event's time).
  if (moved && delivered && d.event_created_at) webhookDelivered.observe(Math.max(0, at.getTime() + a.ms - new Date(d.event_created_at).getTime()) / 1000);
  else if (moved && !delivered) webhookDeadLetter.inc();
  // PENDING and RETRYING count alike (pending), whichever it was.
  if (moved) void deliveryMoved(d, 'PENDING', state, delivered ? at : null);
  else await updateOneBatched(WebhookDeliveryModel, { _id: d._id }, { $set: attemptFields(a), $inc: { attempts: 1 }, $push: pushAttempt(a) });
}

/**
 * An attempt outside the schedule (a manual retry, a recovery): a success delivers, a failure changes
 * nothing else.
 */
export async function recordManualAttempt(d: WebhookDeliveryRecord, at: Date, a: SentAttempt): Promise<void> {
  if (!succeeded(a.status)) {
    // The attempt alone: no transition, the same write as a success's otherwise.
    await WebhookDeliveryModel.findOneAndUpdate({ _id: d._id }, { $set: attemptFields(a), $inc: { attempts: 1 }, $push: pushAttempt(a) }, { returnDocument: 'before', projection: { state: 1 }, lean: true });
    return;
  }
  // The state it replaced, read in the same write: the overview's counts move from it.
  const before = await applyDeliveryTransition(
    'resend_delivered',
    {
      id: d._id,
      record: attemptFields(a),
      set: { next_attempt_at: null, lease_until: 0, ...(d.state !== 'DELIVERED' && { delivered_at: at }) },
      inc: { attempts: 1 },
      push: pushAttempt(a),
    },
    'previous',
  );
  if (before) void deliveryMoved(d, before, 'DELIVERED', before !== 'DELIVERED' ? at : null);
}
