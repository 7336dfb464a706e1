import type { Config } from '../../config';
import type { BackgroundService } from '../../platform/lifecycle';
import { registerTimerHandler, startTimerService, stopTimerService, useAccountClock } from '../../platform/timers/timerService';
import { accountOffsetMs } from '../clock/accountTime';
import { PaymentModel } from './paymentModel';
import { RAIL_TIMER_KIND, runRailStep } from './rail';
import { REFERENCE_EXPIRY_TIMER_KIND, runReferenceExpiry } from './reference';
import { REFUND_TIMER_KIND, runRefundCompletion } from '../refunds/refundService';
import { registerOutbox, startOutboxSweeper, stopOutboxSweeper } from '../events/outbox';
import { hooksIdle } from '../events/eventHooks';

/**
 * Background work of the payments core: the timer handlers of the rail, refunds and reference expiry,
 * the timer poller and the outbox sweeper. `registerCoreJobs` must run in every gateway process before
 * it serves requests (a sandbox clock advance runs handlers in the process that serves it);
 * `startCoreJobs` also starts the poller and the sweeper. Both are idempotent.
 */
// eslint-disable-next-line no-restricted-syntax -- process-wide state, to move into the module's factory (issue 44)
let registered = false;
// eslint-disable-next-line no-restricted-syntax -- process-wide state, to move into the module's factory (issue 44)
let started = false;

export function registerCoreJobs(): void {
  if (registered) return;
  registered = true;
  // The timer platform reads accounts' sandbox clocks through the domain's lookup, given here: a thread
  // that runs no poller (beside a background thread) still schedules timers and advances clocks.
  useAccountClock(accountOffsetMs);
  registerOutbox(PaymentModel);
  registerTimerHandler(RAIL_TIMER_KIND, runRailStep);
  registerTimerHandler(REFERENCE_EXPIRY_TIMER_KIND, runReferenceExpiry);
  registerTimerHandler(REFUND_TIMER_KIND, runRefundCompletion);
}

export function startCoreJobs(config: Pick<Config, 'timerPollMs'>): void {
  registerCoreJobs();
  if (started) return;
  started = true;
  // Finished timers are deleted by their TTL index (TIMER_RETENTION_HOURS, timerModel.ts), not here.
  // The timer platform reads accounts' sandbox clocks through the domain's lookup, given here.
  startTimerService({ pollMs: config.timerPollMs, accountOffsetMs });
  startOutboxSweeper();
}

export async function stopCoreJobs(): Promise<void> {
  if (!started) return;
  started = false;
  await stopTimerService();
  await stopOutboxSweeper();
  // Hooks already queued finish before the database closes (the sweeper would redo them otherwise).
  await hooksIdle();
}

/** For src/server.ts `backgroundServices()`. */
export const paymentsCoreService: BackgroundService = {
  name: 'payments-core',
  start: ({ config }) => startCoreJobs(config),
  stop: () => stopCoreJobs(),
};
