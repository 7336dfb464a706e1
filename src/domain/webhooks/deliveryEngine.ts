import type { GatewayTimers } from '../../platform/timers/timerService';
import { newLeaseOwner } from '../../processId';
import { FairScheduler } from './fairScheduler';
import { OutgoingBudget } from './outgoingBudget';
import { DEFAULT_OUTGOING, type WebhookTargetPolicy } from './targetResolver';
import { createWebhookAgents, type WebhookAgents } from './webhookHttp';

/*
 * What a gateway holds in memory of its webhook deliveries (deliveryService.ts says what it does with
 * them): its own file, so that the attempts (deliveryAttempts.ts) and the service can both take the
 * engine without importing each other.
 */

/**
 * 64 sockets in all; 8 per account (16 endpoints that hang use 8 sockets for 5 s, not 64); 256
 * deliveries waiting in memory per account, 8 192 in all (a delivery's body is a few kB). Retries
 * are admitted only while fewer than `perAccount` of the account's attempts wait, because a retry
 * waits inside a timer handler, whose slots (128) the rail and expiry timers share.
 */
export const ATTEMPT_LIMITS = { total: 64, perAccount: 8, backlogPerAccount: 256, backlogTotal: 8_192 } as const;

/**
 * One gateway's delivery engine: what it has in memory of the deliveries it creates and attempts. Built
 * with its runtime (src/domain/gatewayRuntime.ts) and handed to each call, so that a gateway stopping
 * stops only its own attempts, and two gateways in one process each hold their own queues, as two
 * processes would.
 */
export interface DeliveryEngine {
  /** Where this gateway's webhooks may go (built from its Config). */
  policy: WebhookTargetPolicy;
  /** Its timers: a retry is scheduled there. */
  timers: GatewayTimers;
  /** Its keep-alive agents: its stop destroys its sockets, not another gateway's. */
  agents: WebhookAgents;
  scheduler: FairScheduler;
  /**
   * 'idle' until the webhook service starts (the hook is registered earlier, so that no event's hooks
   * can complete without it: attempts asked for meanwhile wait in `deferred`); 'stopped' at shutdown
   * (deliveries not yet attempted stay PENDING for another process or the next start).
   */
  state: 'idle' | 'running' | 'stopped';
  deferred: Array<() => void>;
  /** Per account, how many times its attempts waiting here were forgotten (a sandbox reset). */
  forgotten: Map<string, number>;
  /**
   * Accounts whose first attempts are spilling to the database: release writes started and finished.
   * Cleared by the sweeper once it finds none of the account's spilled deliveries left.
   */
  spilling: Map<string, { started: number; finished: number }>;
  /** What this gateway may still send, per account and per host (the scheduler's admission). */
  budget: OutgoingBudget;
  /** Stored with every lease this engine takes (`lease_owner`): what its stop hands back (src/domain/leaseHandover.ts). */
  leaseOwner: string;
}

/** Builds a gateway's engine (src/domain/gatewayRuntime.ts), idle until startDeliveryEngine. */
export function createDeliveryEngine(deps: { policy: WebhookTargetPolicy; timers: GatewayTimers }): DeliveryEngine {
  const budget = new OutgoingBudget(deps.policy.outgoing ?? DEFAULT_OUTGOING);
  const e: DeliveryEngine = {
    policy: deps.policy,
    timers: deps.timers,
    agents: createWebhookAgents(),
    // Stopping, a job sends nothing (it leaves its delivery PENDING): it goes at once, budget or not.
    scheduler: new FairScheduler(ATTEMPT_LIMITS, (job) => (e.state !== 'running' ? 0 : budget.tryTake(job.accountId, job.host, job.cost))),
    state: 'idle',
    deferred: [],
    forgotten: new Map(),
    spilling: new Map(),
    budget,
    leaseOwner: newLeaseOwner(),
  };
  return e;
}

export function startDeliveryEngine(e: DeliveryEngine): void {
  e.state = 'running';
  for (const run of e.deferred.splice(0)) run();
}

export function stopDeliveryEngine(e: DeliveryEngine): void {
  e.state = 'stopped';
  e.deferred.length = 0;
  // Jobs waiting for their budget may go now: they only hand their deliveries back.
  e.scheduler.wake();
}

export function deliveryQueueIdle(e: DeliveryEngine): Promise<void> {
  return e.scheduler.idle();
}

/**
 * Diagnostics (and tests): attempts running and waiting in this process, accounts spilling to the
 * database, and (given an account) how many of that account's attempts wait in memory.
 */
export function attemptStats(e: DeliveryEngine, accountId?: string): { inFlight: number; queued: number; queuedForAccount: number; spillingAccounts: string[] } {
  const { scheduler, spilling } = e;
  return {
    inFlight: scheduler.inFlight,
    queued: scheduler.queued,
    queuedForAccount: accountId ? scheduler.queuedFor(accountId) : 0,
    spillingAccounts: [...spilling.keys()],
  };
}

/**
 * The sandbox reset deleted the account's deliveries: the attempts already waiting in the scheduler
 * would still send their (deleted) events, so each checks on its turn that it was not forgotten since.
 */
export function forgetAccountAttempts(e: DeliveryEngine, accountId: string): void {
  const { forgotten } = e;
  forgotten.set(accountId, (forgotten.get(accountId) ?? 0) + 1);
}
