import type { Config } from '../config';
import type { BackgroundService } from '../platform/lifecycle';
import { paymentsCoreService } from '../domain/payments/paymentsJobs';
import { checkoutLifecycleService } from '../domain/checkout/checkoutLifecycle';
import { webhookDeliveryService } from '../domain/webhooks/webhookBackground';
import { webhookTargetPolicy } from '../domain/webhooks/targetResolver';
import { startEventBus, stopEventBus, subscribeAll } from '../realtime/eventBus';

/** The background thread's: no HTTP, no streams; an event bus of its own events for the webhook fast path. */
export function backgroundThreadServices(config: Config): BackgroundService[] {
  return [
    localEventBus,
    checkoutLifecycleService(),
    // Before the core, so that it stops after it (src/background/services.ts says why).
    webhookDeliveryService({ subscribeAll, policy: webhookTargetPolicy(config) }),
    paymentsCoreService,
  ];
}

const localEventBus: BackgroundService = {
  name: 'event-bus-local',
  start: async () => {
    await startEventBus({ mode: 'local' });
  },
  stop: () => stopEventBus(),
};
