import type { BackgroundService } from '../platform/lifecycle';
import { paymentsCoreService } from '../domain/payments/paymentsJobs';
import { checkoutLifecycleService } from '../domain/checkout/checkoutLifecycle';
import { webhookDeliveryService } from '../domain/webhooks/webhookBackground';
import type { GatewayRuntime } from '../domain/gatewayRuntime';

/** The background thread's: no HTTP, no streams, no event bus (its events reach streams through the database). */
export function backgroundThreadServices(runtime: GatewayRuntime): BackgroundService[] {
  return [
    checkoutLifecycleService(runtime),
    // Before the core, so that it stops after it (src/background/services.ts says why).
    webhookDeliveryService(runtime),
    paymentsCoreService(runtime),
  ];
}
