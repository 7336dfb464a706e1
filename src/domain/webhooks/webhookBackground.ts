import type { BackgroundService } from '../../platform/lifecycle';
import { logger } from '../../logger';
import type { GatewayRuntime } from '../gatewayRuntime';
import { handBackLeases } from '../leaseHandover';
import { createDeliveriesForEvent, runHoldTimer, runRetryTimer, sweepPendingDeliveries } from './deliveryService';
import { deliveryQueueIdle, startDeliveryEngine, stopDeliveryEngine } from './deliveryEngine';
import { loadSecretsKey } from './secretsKey';
import { RETRY_TIMER_KIND } from './webhookEndpointService';
import { HOLD_TIMER_KIND } from './chaosHold';
import { ATTEMPT_TIMEOUT_MS, closeWebhookAgents } from './webhookHttp';

const SWEEP_MS = 1_000;
/** Deliveries one pass of the pending sweeper takes at most. */
const SWEEP_BATCH = 100;
/**
 * At stop, how long attempts in flight may take to finish and be recorded: an attempt is bounded by the
 * 5 s request timeout (webhookHttp.ts), then its recording is a database write. One cut short would be
 * sent again by the next process after the receiver took it (two deliveries), so the wait is longer than
 * the attempt by a margin for a busy database; it ends as soon as nothing is in flight.
 */
const STOP_WAIT_MS = ATTEMPT_TIMEOUT_MS + 3_000;

/**
 * Wires the runtime's delivery engine into its gateway: the event hook (where deliveries are created),
 * the retry timers, the pending sweeper. The hook and the timer handler are registered when the service
 * is created, before any background service starts, so that an outbox sweep or timer poll at start-up
 * never runs without them.
 */
export function webhookDeliveryService(runtime: GatewayRuntime): BackgroundService {
  const engine = runtime.deliveries;
  const { policy } = engine;
  let removeHook: (() => void) | null = runtime.hooks.onEventStored((event) => createDeliveriesForEvent(engine, event), { name: 'webhook-deliveries' });
  runtime.timers.register(RETRY_TIMER_KIND, (timer, ctx) => runRetryTimer(engine, timer.payload, ctx.now, ctx.advancing));
  runtime.timers.register(HOLD_TIMER_KIND, (timer, ctx) => runHoldTimer(engine, timer.payload, ctx.advancing));
  let sweepTimer: NodeJS.Timeout | null = null;
  let sweeping: Promise<unknown> | null = null;
  return {
    name: 'webhook-deliveries',
    async start({ config }) {
      // Before anything signs or stores a secret; a wrong key stops the start here.
      await loadSecretsKey(config);
      if (policy.allowPrivateNetworks) {
        logger.warn('WEBHOOK_ALLOW_PRIVATE_NETWORKS=true: webhooks may target loopback and private addresses (local work only)');
      }
      startDeliveryEngine(engine);
      sweepTimer = setInterval(() => {
        if (sweeping) return;
        sweeping = sweepWhileFull(engine)
          .catch((err: unknown) => logger.error({ err }, 'webhook pending sweep failed'))
          .finally(() => {
            sweeping = null;
          });
      }, SWEEP_MS);
      sweepTimer.unref();
    },
    async stop() {
      stopDeliveryEngine(engine);
      removeHook?.();
      removeHook = null;
      if (sweepTimer) clearInterval(sweepTimer);
      sweepTimer = null;
      if (sweeping) await sweeping;
      // Attempts in flight finish and are recorded (each is bounded by the 5 s timeout); queued ones stay
      // PENDING with their lease released, for the next process's sweeper.
      await Promise.race([deliveryQueueIdle(engine), new Promise((r) => setTimeout(r, STOP_WAIT_MS).unref())]);
      closeWebhookAgents(engine.agents);
      // The last of this gateway's leased work has drained (the payments core, stopped before this
      // service, ran its queued hooks): what it still holds goes back to the next process now.
      await handBackLeases(runtime);
    },
  };
}

/**
 * Passes of the pending sweeper one after another while each takes a whole batch, then the next tick:
 * a process that finds many deliveries left to it (a predecessor's, its lease handed back or lapsed)
 * takes them as fast as its accounts have room, not a batch a second. A pass that took fewer found no
 * more, or no room.
 */
async function sweepWhileFull(engine: GatewayRuntime['deliveries']): Promise<void> {
  for (;;) {
    const started = await sweepPendingDeliveries(engine, SWEEP_BATCH);
    if (started < SWEEP_BATCH || engine.state !== 'running') return;
  }
}
