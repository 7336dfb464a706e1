import type { Config } from '../config';
import type { BackgroundService } from '../platform/lifecycle';
import { paymentsCoreService } from '../domain/payments/paymentsJobs';
import { checkoutLifecycleService } from '../domain/checkout/checkoutLifecycle';
import { webhookDeliveryService } from '../domain/webhooks/webhookBackground';
import { startEventBus, stopEventBus, subscribeAll } from '../realtime/eventBus';
import type { GatewayRuntime } from '../domain/gatewayRuntime';

/** The background thread's: no HTTP, no streams; an event bus of its own events for the webhook fast path. */
export function backgroundThreadServices(config: Config, runtime: GatewayRuntime): BackgroundService[] {
  return [
    localEventBus(runtime),
    checkoutLifecycleService(runtime),
    // Before the core, so that it stops after it (src/background/services.ts says why).
    webhookDeliveryService({ runtime, subscribeAll }),
    paymentsCoreService(runtime),
  ];
}

function localEventBus(runtime: GatewayRuntime): BackgroundService {
  return {
    name: 'event-bus-local',
    start: async () => {
      await startEventBus({ hooks: runtime.hooks, mode: 'local' });
    },
    stop: () => stopEventBus({ hooks: runtime.hooks }),
  };
}
