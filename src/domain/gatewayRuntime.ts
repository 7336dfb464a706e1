import { createGatewayTimers, type GatewayTimers } from '../platform/timers/timerService';
import { createEventHooks, type EventHooks } from './events/eventHooks';
import { createOutboxes, type Outboxes } from './events/outbox';
import { createDeliveryEngine, type DeliveryEngine } from './webhooks/deliveryEngine';
import type { WebhookTargetPolicy } from './webhooks/targetResolver';

/**
 * What one gateway holds of its own, built explicitly when it starts (src/server.ts, the background
 * thread) and handed down: to each module's factory, which registers its hooks, timer handlers and
 * outboxes here, and through the operations context to the services a request calls. Two gateways in
 * one process then run each only its own, and share the database alone. Passed, not looked up: no
 * per-request context store (bench/HISTORY.md, Round 38: one cost 15-45 % of the gateway's CPU).
 */
export interface GatewayRuntime {
  hooks: EventHooks;
  timers: GatewayTimers;
  outboxes: Outboxes;
  /** Its webhook delivery engine: the deliveries it creates and attempts, its queues and sockets. */
  deliveries: DeliveryEngine;
}

/** `webhookTargets`: where its webhooks may go (targetResolver.ts webhookTargetPolicy, from its Config). */
export function createGatewayRuntime(opts: { webhookTargets: WebhookTargetPolicy }): GatewayRuntime {
  const hooks = createEventHooks();
  const timers = createGatewayTimers();
  return {
    hooks,
    timers,
    outboxes: createOutboxes({ hooks, timers }),
    deliveries: createDeliveryEngine({ policy: opts.webhookTargets, timers }),
  };
}
