import type { BackgroundService } from '../../platform/lifecycle';
import { logger } from '../../logger';
import type { StoredEvent } from '../events';
import type { GatewayRuntime } from '../gatewayRuntime';
import {
  createDeliveriesFastPath,
  createDeliveriesWhileStoring,
  deliveriesHook,
  deliveryQueueIdle,
  runRetryTimer,
  startDeliveryEngine,
  stopDeliveryEngine,
  sweepPendingDeliveries,
} from './deliveryService';
import { loadSecretsKey } from './secretsKey';
import { RETRY_TIMER_KIND } from './webhookEndpointService';
import { ATTEMPT_TIMEOUT_MS, closeWebhookAgents } from './webhookHttp';

const SWEEP_MS = 1_000;
/**
 * At stop, how long attempts in flight may take to finish and be recorded: an attempt is bounded by the
 * 5 s request timeout (webhookHttp.ts), then its recording is a database write. One cut short would be
 * sent again by the next process after the receiver took it (two deliveries), so the wait is longer than
 * the attempt by a margin for a busy database; it ends as soon as nothing is in flight.
 */
const STOP_WAIT_MS = ATTEMPT_TIMEOUT_MS + 3_000;

/**
 * Wires the delivery engine into the gateway: the event hook, the retry timers, the pending sweeper.
 * The hook and the timer handler are registered when the service is created, before any background
 * service starts, so that an outbox sweep or timer poll at start-up never runs without them.
 */
/**
 * Subscribes a listener to every stored event of every account as this process learns of it, and returns
 * the unsubscribe function: the event bus's subscribeAll (src/realtime/eventBus.ts), handed in by
 * src/server.ts, because the domain does not import the realtime floor (docs/architecture.md).
 */
export type SubscribeAllEvents = (listener: (event: StoredEvent) => void) => () => void;

/** Runs the runtime's delivery engine (its policy: where this gateway's webhooks may go, from its Config). */
export function webhookDeliveryService(deps: { runtime: GatewayRuntime; subscribeAll: SubscribeAllEvents }): BackgroundService {
  const { runtime } = deps;
  const engine = runtime.deliveries;
  const { policy } = engine;
  let removeHook: (() => void) | null = runtime.hooks.onEventStored((event) => deliveriesHook(engine, event), { name: 'webhook-deliveries' });
  let unsubscribe: (() => void) | null = null;
  let stopEarlyPath: (() => void) | null = null;
  runtime.timers.register(RETRY_TIMER_KIND, (timer, ctx) => runRetryTimer(engine, timer.payload, ctx.now, ctx.advancing));
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
      stopEarlyPath = runtime.hooks.onEventStoring((storing) => createDeliveriesWhileStoring(engine, storing));
      // The bus may hand it another gateway's events, from that gateway's work: they go to this one's engine.
      unsubscribe = deps.subscribeAll((event) => createDeliveriesFastPath(engine, event));
      sweepTimer = setInterval(() => {
        if (sweeping) return;
        sweeping = sweepPendingDeliveries(engine)
          .catch((err: unknown) => logger.error({ err }, 'webhook pending sweep failed'))
          .finally(() => {
            sweeping = null;
          });
      }, SWEEP_MS);
      sweepTimer.unref();
    },
    async stop() {
      stopDeliveryEngine(engine);
      unsubscribe?.();
      unsubscribe = null;
      stopEarlyPath?.();
      stopEarlyPath = null;
      removeHook?.();
      removeHook = null;
      if (sweepTimer) clearInterval(sweepTimer);
      sweepTimer = null;
      if (sweeping) await sweeping;
      // Attempts in flight finish and are recorded (each is bounded by the 5 s timeout); queued ones stay
      // PENDING with their lease released, for the next process's sweeper.
      await Promise.race([deliveryQueueIdle(engine), new Promise((r) => setTimeout(r, STOP_WAIT_MS).unref())]);
      closeWebhookAgents(engine.agents);
    },
  };
}
