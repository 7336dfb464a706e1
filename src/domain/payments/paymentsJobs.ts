import type { Config } from '../../config';
import type { BackgroundService } from '../../platform/lifecycle';
import { startTimerService, stopTimerService, useAccountClock } from '../../platform/timers/timerService';
import { accountOffsetMs } from '../clock/accountTime';
import { PaymentModel } from './paymentModel';
import { RAIL_TIMER_KIND, runRailStep } from './rail';
import { REFERENCE_EXPIRY_TIMER_KIND, runReferenceExpiry } from './reference';
import { REFUND_TIMER_KIND, runRefundCompletion } from '../refunds/refundService';
import type { GatewayRuntime } from '../gatewayRuntime';

/**
 * Background work of the payments core: the timer handlers of the rail, refunds and reference expiry,
 * the timer poller and the outbox sweeper, of one gateway. `register` must run in every gateway before
 * it serves requests (a sandbox clock advance runs handlers in the gateway that serves it); `start`
 * also starts the poller and the sweeper. Both are idempotent.
 */
export interface PaymentsCore {
  register(): void;
  start(config: Pick<Config, 'timerPollMs'>): void;
  stop(): Promise<void>;
}

export function createPaymentsCore(runtime: GatewayRuntime): PaymentsCore {
  let registered = false;
  let started = false;
  const core: PaymentsCore = {
    register() {
      if (registered) return;
      registered = true;
      // The timer platform reads accounts' sandbox clocks through the domain's lookup, given here: a thread
      // that runs no poller (beside a background thread) still schedules timers and advances clocks.
      useAccountClock(accountOffsetMs);
      runtime.outboxes.register(PaymentModel);
      runtime.timers.register(RAIL_TIMER_KIND, (timer, ctx) => runRailStep(runtime, timer, ctx));
      runtime.timers.register(REFERENCE_EXPIRY_TIMER_KIND, (timer, ctx) => runReferenceExpiry(runtime, timer, ctx));
      runtime.timers.register(REFUND_TIMER_KIND, (timer, ctx) => runRefundCompletion(runtime, timer, ctx));
    },
    start(config) {
      core.register();
      if (started) return;
      started = true;
      // Finished timers are deleted by their TTL index (TIMER_RETENTION_HOURS, timerModel.ts), not here.
      // The timer platform reads accounts' sandbox clocks through the domain's lookup, given here.
      startTimerService(runtime.timers, { pollMs: config.timerPollMs, accountOffsetMs });
      runtime.outboxes.startSweeper();
    },
    async stop() {
      if (!started) return;
      started = false;
      await stopTimerService(runtime.timers);
      await runtime.outboxes.stopSweeper();
      // Hooks already queued finish before the database closes (the sweeper would redo them otherwise).
      await runtime.hooks.hooksIdle();
    },
  };
  return core;
}

/** For src/background/services.ts: the poller and the sweeper too. */
export function paymentsCoreService(runtime: GatewayRuntime): BackgroundService {
  const core = createPaymentsCore(runtime);
  return {
    name: 'payments-core',
    start: ({ config }) => core.start(config),
    stop: () => core.stop(),
  };
}

/** The timer handlers without the poller and the sweeper: the HTTP thread's part beside a background thread. */
export function paymentsCoreHandlersService(runtime: GatewayRuntime): BackgroundService {
  const core = createPaymentsCore(runtime);
  return {
    name: 'payments-core-handlers',
    start: () => core.register(),
    // Hooks already queued finish before the database closes (the sweeper would redo them otherwise).
    stop: () => runtime.hooks.hooksIdle(),
  };
}
