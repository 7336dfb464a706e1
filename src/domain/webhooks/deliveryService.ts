import { insertBatched } from '../../db/batching';
import { deliveryCreated } from '../overview/rollupWrites';
import { ApiError } from '../../errors';
import { newId } from '../../ids';
import { logger } from '../../logger';
import { scheduleTimer } from '../../platform/timers/timerService';
import { accountOffsetMs, nowForAccount, readAccountClock } from '../clock/accountTime';
import { accountEndpoints } from './endpointCache';
import { toEventResource, type StoredEvent } from '../events';
import { isDuplicateKey } from '../../db/errors';
import type { AttemptJob, Then } from './fairScheduler';
import { WebhookDeliveryModel, type WebhookDeliveryRecord } from './webhookDeliveryModel';
import { INITIAL_STATE, takesScheduledAttempts, type DeliveryState } from './deliveryStates';
import { applyDeliveryTransition } from './deliveryTransition';
import { ATTEMPT_LIMITS, type DeliveryEngine } from './deliveryEngine';
import { recordAttempt, recordManualAttempt, send } from './deliveryAttempts';
import { WebhookEndpointModel, type WebhookEndpointRecord } from './webhookEndpointModel';
import { getWebhookEndpointRecord, testPingTarget } from './webhookEndpointService';
import { toWebhookDeliveryResource, type WebhookDeliveryResource } from './webhookSerializer';
import { chaosPlan, genuineKind, planCounters, type ChaosPlan } from './chaos';
import { countChaos } from './chaosService';
import { trySendChaosCopy } from './chaosCopies';
import { endpointSent, HOLD_TIMER_KIND, holdMs, releaseOnNextSend } from './chaosHold';
import { TimerDeferral } from '../../platform/timers/timerDeferral';
import { DEFAULT_OUTGOING, targetHost } from './targetResolver';
import { finishRecovery, startRecovery } from './recoveryLock';
import { holdForPull, isPullEndpoint } from './pullEndpointService';

/**
 * The delivery engine: when attempts are made (creation, queues, leases, holds, timers, the sweeper, the
 * API). A delivery is written before its first attempt and leased, so a dead process's work is taken up by
 * the sweeper; attempts take turns per account and wait for the outgoing budget, and what does not fit
 * waits in the database rather than in memory: later, never lost. What a gateway holds for them:
 * deliveryEngine.ts; an attempt, deliveryAttempts.ts. The steps:
 * docs/decisions/notes/webhooks.md, "The delivery engine".
 */
const PENDING_LEASE_MS = 15_000;
/** A retry whose account's attempts are backed up fires again this much later (no attempt counted). */
const BACKED_UP_RETRY_MS = 1_000;


/** `endpointsVersion`: the account's `endpoints_version` as just read (endpointCache.ts). */
async function matchingEndpoints(event: StoredEvent, endpointsVersion: number): Promise<WebhookEndpointRecord[]> {
  if (event.type === 'test.ping') {
    // A test ping goes to the endpoint it was sent to, whatever that endpoint's filter.
    const target = testPingTarget(event.data);
    if (!target) return [];
    const one = await WebhookEndpointModel.findOne({ _id: target, account_id: event.accountId }).lean();
    return one ? [one] : [];
  }
  const all = await accountEndpoints(event.accountId, endpointsVersion);
  return all.filter((e) => {
    // Read as strings: the event's type is a string here (events are not typed by the contract yet).
    const filter: readonly string[] = e.events;
    return filter.includes('*') || filter.includes(event.type);
  });
}

/**
 * Writes the deliveries of an event: the event's `onEventStored` hook (webhookBackground.ts), the one
 * place deliveries are created. It runs once the event is stored (a receiver who looks it up finds it),
 * in the event's order among its payment's (the hooks' per-payment chains), and at least once: after a
 * crash, the hook sweeper of whichever process takes the event's lease runs it again, and the unique
 * index on (event, endpoint) makes that run find its deliveries written. Quick: one read of the
 * account (and of its endpoints when they changed) and one insert per endpoint; attempts run in the
 * background, sent where the engine's policy allows.
 */
export async function createDeliveriesForEvent(e: DeliveryEngine, event: StoredEvent): Promise<void> {
  // One read of the account (batched with concurrent events'): its clock, for the delivery's time, and
  // the version of its endpoints, which are read again only when it moved.
  const account = await readAccountClock(event.accountId);
  const matching = await matchingEndpoints(event, account?.endpoints_version ?? 0);
  const endpoints = matching.filter((e) => !isPullEndpoint(e));
  const pulled = matching.filter(isPullEndpoint);
  if (matching.length === 0) return;
  const offsetMs = account?.clock_offset_ms ?? 0;
  const body = JSON.stringify(toEventResource({ _id: event.id, type: event.type, sequence: event.sequence, created_at: event.createdAt, data: event.data, livemode: event.livemode }));
  // A pull endpoint's events wait for it to fetch them: nothing is sent.
  await Promise.all(pulled.map((endpoint) => holdForPull(endpoint, event, body)));
  const created = await Promise.all(
    endpoints.map(async (endpoint) => {
      // Chaos is decided here, once per delivery, and stored with it (chaos.ts).
      const plan = chaosPlan(endpoint.chaos, event.id, endpoint._id);
      const doc: WebhookDeliveryRecord = {
        _id: newId('whd'),
        account_id: event.accountId,
        endpoint_id: endpoint._id,
        event_id: event.id,
        event_type: event.type,
        event_seq: event.seq,
        payment_id: event.paymentId,
        body,
        state: INITIAL_STATE.genuine,
        step: 0,
        attempts: 0,
        last_status: null,
        last_ms: null,
        last_attempt_at: null,
        signature_header: null,
        last_error: null,
        next_attempt_at: null,
        // A chaos hold (delay, reorder) is part of the first attempt: no sweeper takes it meanwhile.
        lease_until: Date.now() + holdMs(plan) + PENDING_LEASE_MS,
        lease_owner: e.leaseOwner,
        ...(holdMs(plan) > 0 && { held: true }),
        created_at: new Date(Date.now() + offsetMs),
        event_created_at: event.createdAt,
        ...(event.traceParent && { trace_parent: event.traceParent }),
        ...(plan && { chaos: genuineKind(plan), chaos_plan: plan }),
      };
      try {
        // The driver's insert, batched with concurrent events' deliveries: the record is complete.
        // Acknowledged once applied, so that the first attempt does not wait for a journal commit: the
        // attempt's recording (durable) comes after it and after its event's insert, and implies both.
        // Lost with a crash before that, the event's hooks (not yet marked done) create it again and it
        // is sent again: delivery is at-least-once by contract (receivers de-duplicate by
        // Service-Event-Id), as after a crash between a request and its recording.
        await insertBatched(WebhookDeliveryModel, doc, 'applied');
        void deliveryCreated(doc);
        // Counted by the one insert that won, so once per delivery whichever process made it.
        if (plan) void countChaos(endpoint._id, planCounters(plan)).catch((err: unknown) => logger.warn({ err, deliveryId: doc._id }, 'chaos report not counted'));
        return { doc, endpoint };
      } catch (err) {
        // Already created by an earlier run of this hook: that run (or the sweeper) attempts it.
        if (isDuplicateKey(err)) return null;
        throw err;
      }
    }),
  );
  for (const item of created) {
    if (!item) continue;
    const { doc, endpoint } = item;
    if (doc.held) void holdDelivery(e, doc, offsetMs).catch((err: unknown) => logger.warn({ err, deliveryId: doc._id }, 'chaos hold not scheduled: its lease lapses and the sweeper sends it'));
    else startFirstAttempt(e, doc, endpoint, offsetMs);
  }
}

/**
 * A delivery chaos holds: its timer, due on the account's clock when its longest wait ends, and (reordered)
 * its early release when its endpoint's next delivery is sent here.
 */
async function holdDelivery(e: DeliveryEngine, d: WebhookDeliveryRecord, offsetMs: number): Promise<void> {
  const plan = d.chaos_plan!;
  if (plan.reorder) releaseOnNextSend(d.endpoint_id, d._id, d.account_id, Date.now() + plan.delay_ms, () => void releaseHeld(e, d._id, false));
  await scheduleTimer({
    accountId: d.account_id,
    kind: HOLD_TIMER_KIND,
    refId: d.endpoint_id,
    dueAt: new Date(d.created_at.getTime() + holdMs(plan)),
    payload: { delivery_id: d._id },
    dedupeKey: `${d._id}:hold`,
    offsetMs,
    timers: e.timers,
  });
}

/** Timer handler for `webhook.hold`: the hold is over (or a clock advance passed it). */
export async function runHoldTimer(e: DeliveryEngine, payload: Record<string, unknown>, advancing: boolean): Promise<void> {
  await releaseHeld(e, String(payload.delivery_id ?? ''), advancing);
}

/**
 * Ends a delivery's hold, once: the claim matches only a delivery still held (not deleted with its
 * endpoint or by a sandbox reset, not released by someone else). A clock advance waits for the attempt,
 * unless the budget would make it wait: then it goes later, as any first attempt.
 */
async function releaseHeld(e: DeliveryEngine, deliveryId: string, advancing: boolean): Promise<void> {
  const d = await applyDeliveryTransition(
    'hold_release',
    { id: deliveryId, where: { held: true }, set: { held: false, lease_until: Date.now() + PENDING_LEASE_MS, lease_owner: e.leaseOwner } },
    'claim',
  );
  if (!d) return;
  const endpoint = await WebhookEndpointModel.findById(d.endpoint_id).lean();
  if (!endpoint) return;
  const offsetMs = await accountOffsetMs(d.account_id);
  const job = firstAttemptJob(e, d, endpoint, offsetMs);
  if (!advancing || e.state !== 'running' || e.budget.waitMs(job.accountId, job.host, job.cost) > 0 || e.spilling.has(d.account_id)) {
    startFirstAttempt(e, d, endpoint, offsetMs);
    return;
  }
  const done = e.scheduler.submit(job);
  if (done) await done;
  else await spill(e, d);
}

function orderingKey(d: WebhookDeliveryRecord): string {
  return `${d.endpoint_id}:${d.payment_id ?? d.event_id}`;
}


/** `cost`: the requests it sends (the outgoing budget's unit, and the backlog's). */
function attemptJob(e: DeliveryEngine, d: WebhookDeliveryRecord, endpoint: WebhookEndpointRecord, run: AttemptJob['run'], cost = 1): AttemptJob {
  const { forgotten } = e;
  const generation = forgotten.get(d.account_id) ?? 0;
  const current = () => (forgotten.get(d.account_id) ?? 0) === generation;
  const host = targetHost(endpoint.url ?? '');
  return { id: d._id, accountId: d.account_id, endpointId: d.endpoint_id, key: orderingKey(d), host, cost, run: async () => (current() ? run() : undefined) };
}

/** The requests of a first attempt: the genuine one and the forged copies sent before it. */
function firstAttemptCost(d: WebhookDeliveryRecord): number {
  return 1 + (d.chaos_plan?.forged.length ?? 0);
}

function firstAttemptJob(e: DeliveryEngine, delivery: WebhookDeliveryRecord, endpoint: WebhookEndpointRecord, offsetMs: number): AttemptJob {
  return attemptJob(
    e,
    delivery,
    endpoint,
    async () => {
      // Stopping: left PENDING for the next process, its lease released so that it is taken at once
      // rather than when the lease lapses (a failed release only delays it by up to PENDING_LEASE_MS).
      if (e.state !== 'running') return void (await spill(e, delivery));
      if (!(await holdLease(delivery))) return;
      return attemptStep(e, delivery, endpoint, 1, new Date(Date.now() + offsetMs));
    },
    firstAttemptCost(delivery),
  );
}


/** `fromSweep`: taken back by the sweeper, which may refill a spilling account (in release order). */
function startFirstAttempt(
  e: DeliveryEngine,
  delivery: WebhookDeliveryRecord,
  endpoint: WebhookEndpointRecord,
  offsetMs: number,
  fromSweep = false,
): void {
  if (e.state === 'idle') {
    e.deferred.push(() => startFirstAttempt(e, delivery, endpoint, offsetMs, fromSweep));
    return;
  }
  if (e.state === 'stopped') return;
  const done = fromSweep || !e.spilling.has(delivery.account_id) ? e.scheduler.submit(firstAttemptJob(e, delivery, endpoint, offsetMs)) : null;
  if (done) {
    done.catch((err: unknown) => logger.error({ err, deliveryId: delivery._id }, 'webhook attempt failed'));
    return;
  }
  if (!e.scheduler.holds(delivery._id)) void spill(e, delivery);
}

/** Leaves a delivery that does not fit to the database: PENDING, with a lease that has lapsed now. */
async function spill(e: DeliveryEngine, d: WebhookDeliveryRecord): Promise<void> {
  const { spilling } = e;
  let releases = spilling.get(d.account_id);
  if (!releases) spilling.set(d.account_id, (releases = { started: 0, finished: 0 }));
  releases.started++;
  try {
    await applyDeliveryTransition('lease_release', { id: d._id, where: { lease_until: d.lease_until }, set: { lease_until: Date.now() } }, 'update');
  } catch (err) {
    // The lease then lapses by itself (15 s): later, not lost.
    logger.warn({ err, deliveryId: d._id }, 'could not release a spilled webhook delivery');
  } finally {
    releases.finished++;
  }
}

/** After a long wait in the queue the lease may be short: extend it, unless someone else took over. */
async function holdLease(d: WebhookDeliveryRecord): Promise<boolean> {
  if (d.lease_until - Date.now() > PENDING_LEASE_MS / 2) return true;
  const next = Date.now() + PENDING_LEASE_MS;
  if (!(await applyDeliveryTransition('lease_extend', { id: d._id, where: { lease_until: d.lease_until }, set: { lease_until: next } }, 'update'))) return false;
  d.lease_until = next;
  return true;
}

/**
 * Scheduled attempt number `step` (1..4). The result is recorded only if the delivery has not moved on
 * meanwhile; the next retry is scheduled (idempotently) before the state says RETRYING, so a crash in
 * between can only leave a timer that finds nothing to do.
 */
async function performScheduledAttempt(e: DeliveryEngine, d: WebhookDeliveryRecord, endpoint: WebhookEndpointRecord, step: number, at: Date): Promise<void> {
  await (await attemptStep(e, d, endpoint, step, at))();
}

/**
 * performScheduledAttempt in two parts, for the scheduler: the request now, in an attempt slot, and
 * the recording it hands back, after the slot is freed. The slots bound the sockets a receiver can
 * hold (ATTEMPT_LIMITS); with the database write inside them, an account's deliveries also queued
 * behind the writes of its earlier attempts, each waiting its turn on a busy engine.
 */
async function attemptStep(e: DeliveryEngine, d: WebhookDeliveryRecord, endpoint: WebhookEndpointRecord, step: number, at: Date): Promise<Then> {
  const plan = step === 1 ? d.chaos_plan : null;
  // Forged copies go first, in the same slot; their outcome never decides the delivery's.
  for (const kind of plan?.forged ?? []) await trySendChaosCopy(kind, d, endpoint, at, (h) => send(e, d, endpoint, at, h));
  const a = await send(e, d, endpoint, at);
  endpointSent(d.endpoint_id);
  if (plan) scheduleDuplicate(e, d, endpoint, at, plan);
  return () => recordAttempt(e, d, step, at, a);
}

/**
 * The duplicate of a first attempt, `duplicate_after_ms` later, in a slot of its own (lost at a restart).
 * Counted in its account's backlog from now (reserved), so that copies cannot pile up in memory past
 * it: one that does not fit is not sent (a chaos copy is an extra; the log says so).
 */
function scheduleDuplicate(e: DeliveryEngine, d: WebhookDeliveryRecord, endpoint: WebhookEndpointRecord, at: Date, plan: ChaosPlan): void {
  if (plan.duplicate_after_ms === null) return;
  if (!e.scheduler.reserve(d.account_id)) {
    logger.info({ deliveryId: d._id, accountId: d.account_id }, 'chaos duplicate not sent: the account’s delivery backlog is full');
    return;
  }
  const sendDuplicate = () => trySendChaosCopy('duplicate', d, endpoint, at, (h) => send(e, d, endpoint, at, h));
  setTimeout(() => {
    e.scheduler.unreserve(d.account_id);
    if (e.state !== 'running') return;
    void e.scheduler.submit({ ...attemptJob(e, d, endpoint, sendDuplicate), id: `${d._id}:duplicate`, key: `${orderingKey(d)}:duplicate` });
  }, plan.duplicate_after_ms).unref();
}

/** Timer handler for `webhook.retry`: does nothing when the delivery has moved past this step. */
export async function runRetryTimer(e: DeliveryEngine, payload: Record<string, unknown>, now: Date, advancing: boolean): Promise<void> {
  const deliveryId = String(payload.delivery_id ?? '');
  const step = Number(payload.step);
  const d = await WebhookDeliveryModel.findById(deliveryId).lean();
  if (!d || !takesScheduledAttempts(d.state) || d.step >= step) return;
  const endpoint = await WebhookEndpointModel.findById(d.endpoint_id).lean();
  if (!endpoint) return;
  const job = attemptJob(e, d, endpoint, () => attemptStep(e, d, endpoint, step, now));
  // Over the outgoing budget: deferred by the timer service to when the budget has room, not queued, so
  // that no timer handler slot (shared with the rail) waits on the budget; no attempt counted, by either.
  const waitMs = e.budget.waitMs(job.accountId, job.host, job.cost);
  if (waitMs > 0) throw new TimerDeferral(`webhook requests of account ${d.account_id} or to ${job.host} are over their cap; retry ${step} of ${d._id} fires again later`, waitMs);
  // A clock advance waits for its own account's attempts (the caller asked for them); a timer fired
  // by the poller takes a place only when few of the account's attempts wait.
  const done = e.scheduler.submit(job, advancing ? undefined : ATTEMPT_LIMITS.perAccount);
  if (!done) throw new TimerDeferral(`webhook attempts of account ${d.account_id} are backed up; retry ${step} of ${d._id} fires again later`, BACKED_UP_RETRY_MS);
  await done;
}

/**
 * First attempts nobody is making: PENDING deliveries whose lease lapsed (their process died) or was
 * released (spilled). Oldest lease first, so spilled deliveries come back in the order they left; the
 * accounts with no room now are skipped without a write.
 */
export async function sweepPendingDeliveries(e: DeliveryEngine, limit = 100): Promise<number> {
  const { spilling } = e;
  if (e.state !== 'running') return 0;
  const full = e.scheduler.fullAccounts();
  if (!full) return 0;
  // Releases settled before the query: the query sees them all.
  const settledBefore = new Map([...spilling].filter(([, r]) => r.started === r.finished).map(([id, r]) => [id, r.started]));
  const now = Date.now();
  const filter: Record<string, unknown> = { state: 'PENDING', lease_until: { $lte: now } };
  if (full.length > 0) filter.account_id = { $nin: full };
  const stale = await WebhookDeliveryModel.find(filter, { _id: 1, account_id: 1, lease_until: 1, event_seq: 1 })
    .sort({ lease_until: 1 })
    .limit(limit)
    .lean();
  stale.sort((a, b) => a.lease_until - b.lease_until || a.event_seq - b.event_seq);
  let started = 0;
  for (const { _id, account_id } of stale) {
    if (e.scheduler.holds(_id) || !e.scheduler.hasRoom(account_id)) continue;
    const claimed = await applyDeliveryTransition(
      'lease_take',
      // A held delivery whose lease lapsed (its hold's timer late): sent now, and its timer finds it taken.
      { id: _id, where: { lease_until: { $lte: now } }, set: { lease_until: Date.now() + PENDING_LEASE_MS, lease_owner: e.leaseOwner, held: false } },
      'claim',
    );
    if (!claimed) continue;
    const endpoint = await WebhookEndpointModel.findById(claimed.endpoint_id).lean();
    if (!endpoint) continue;
    startFirstAttempt(e, claimed, endpoint, await accountOffsetMs(claimed.account_id), true);
    started++;
  }
  // An account stops spilling once this pass saw all stale deliveries (not cut by the limit), none of
  // them its own, and it released nothing after its last release before the query had settled.
  if (stale.length < limit) {
    const seen = new Set(stale.map((s) => s.account_id));
    for (const [accountId, started] of settledBefore) {
      if (spilling.get(accountId)?.started === started && !seen.has(accountId) && !full.includes(accountId)) spilling.delete(accountId);
    }
  }
  return started;
}

/** How many deliveries an endpoint's list holds: the newest. */
export const DELIVERY_LIST_SIZE = 50;

/** An endpoint's last 50 deliveries, newest first; with `state`, the last 50 in that state (GraphQL's filter). */
export async function listDeliveries(
  accountId: string,
  endpointId: string,
  opts: { state?: DeliveryState; limit?: number } = {},
): Promise<WebhookDeliveryResource[]> {
  await getWebhookEndpointRecord(accountId, endpointId);
  const filter = { endpoint_id: endpointId, account_id: accountId, ...(opts.state && { state: opts.state }) };
  const docs = await WebhookDeliveryModel.find(filter).sort({ event_seq: -1, _id: -1 }).limit(opts.limit ?? DELIVERY_LIST_SIZE).lean();
  return docs.map(toWebhookDeliveryResource);
}

/**
 * POST .../deliveries/{id}/retry: one more attempt now, whatever the state. Success makes it
 * DELIVERED (a scheduled retry then finds nothing to do). A failure of a never-attempted delivery
 * counts as its first scheduled attempt; otherwise the state and schedule are left as they were.
 * A chaos copy is refused: it is sent once, and its own result would overwrite a retry's.
 */
export async function retryDeliveryNow(e: DeliveryEngine, accountId: string, endpointId: string, deliveryId: string): Promise<WebhookDeliveryResource> {
  const endpoint = await getWebhookEndpointRecord(accountId, endpointId);
  const d = await WebhookDeliveryModel.findOne({ _id: deliveryId, endpoint_id: endpointId, account_id: accountId }).lean();
  if (!d) throw ApiError.notFound('webhook delivery', deliveryId);
  if (d.copy) throw ApiError.invalid(`This delivery is a chaos copy (${d.copy}), sent once and never again; retry its genuine delivery of ${d.event_id} instead`);
  const at = await nowForAccount(accountId);
  // Not queued: the caller waits for this one attempt, so over budget it is told when to come back.
  const waitMs = e.budget.tryTake(accountId, targetHost(endpoint.url ?? ''), d.state === 'PENDING' ? firstAttemptCost(d) : 1);
  if (waitMs > 0) {
    const seconds = Math.ceil(waitMs / 1000);
    throw new ApiError('rate_limit_exceeded', `Webhook requests of this account or to this endpoint's host are over their cap (docs/webhooks.md); retry in ${seconds} s`, { 'Retry-After': String(seconds) });
  }
  if (d.state === 'PENDING') await performScheduledAttempt(e, d, endpoint, 1, at);
  else await manualAttempt(e, d, endpoint, at);
  const after = await WebhookDeliveryModel.findById(d._id).lean();
  if (!after) throw ApiError.notFound('webhook delivery', deliveryId);
  return toWebhookDeliveryResource(after);
}

/** An attempt outside the schedule (a manual retry, a recovery): a success delivers, a failure changes nothing else. */
async function manualAttempt(e: DeliveryEngine, d: WebhookDeliveryRecord, endpoint: WebhookEndpointRecord, at: Date): Promise<void> {
  await recordManualAttempt(d, at, await send(e, d, endpoint, at));
}

/** How many deliveries one recovery queues at the most (an account's backlog in memory). */
const RECOVER_LIMIT = ATTEMPT_LIMITS.backlogPerAccount;

/**
 * POST .../recover: one more attempt of each RETRYING or DEAD_LETTER delivery of the endpoint created
 * since `since` (account time), queued in the fair scheduler like any attempt; chaos copies are not
 * sent again. Answers how many were queued (one already waiting in this process is not queued twice).
 * One runs per endpoint at a time, and the next may start a cooldown after its attempts have all
 * ended (recoveryLock.ts): otherwise 409.
 */
export async function recoverDeliveries(e: DeliveryEngine, accountId: string, endpointId: string, since: Date): Promise<{ object: 'recovery'; deliveries: number }> {
  const endpoint = await getWebhookEndpointRecord(accountId, endpointId);
  const cooldownMs = (e.policy.outgoing ?? DEFAULT_OUTGOING).recoverCooldownMs;
  const run = await startRecovery(accountId, endpointId, cooldownMs);
  const attempts: Array<Promise<void>> = [];
  try {
    const failed = await WebhookDeliveryModel.find({ endpoint_id: endpointId, account_id: accountId, state: { $in: ['RETRYING', 'DEAD_LETTER'] }, created_at: { $gte: since }, copy: null })
      .sort({ event_seq: 1, _id: 1 })
      .limit(RECOVER_LIMIT)
      .lean();
    const at = await nowForAccount(accountId);
    for (const d of failed) {
      const done = e.scheduler.submit(attemptJob(e, d, endpoint, () => manualAttempt(e, d, endpoint, at)));
      if (!done) continue;
      attempts.push(done.catch((err: unknown) => logger.error({ err, deliveryId: d._id }, 'webhook recovery attempt failed')));
    }
  } finally {
    // The run ends when its last attempt has (at once when it queued none); the cooldown starts then.
    void Promise.all(attempts)
      .then(() => finishRecovery(endpointId, run, cooldownMs))
      .catch((err: unknown) => logger.warn({ err, endpointId }, 'recovery end not recorded: the next may start when its run lease lapses'));
  }
  return { object: 'recovery', deliveries: attempts.length };
}
