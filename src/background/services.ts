import type { BackgroundService } from '../platform/lifecycle';
import { requestLogService } from '../domain/logs/requestLogBackground';
import { paymentsCoreHandlersService, paymentsCoreService } from '../domain/payments/paymentsJobs';
import { checkoutLifecycleService } from '../domain/checkout/checkoutLifecycle';
import { webhookDeliveryService } from '../domain/webhooks/webhookBackground';
import type { GatewayRuntime } from '../domain/gatewayRuntime';
import { realtimeService } from '../realtime/realtimeBackground';
import type { Realtime } from '../realtime/createRealtime';
import type { Graphql } from '../graphql/createGraphql';

/**
 * The background services of each thread, in start order (stopped in reverse), each given its gateway's
 * settings and runtime at its start (no process-wide setting), the HTTP thread's its realtime layer and
 * GraphQL endpoint too (src/server.ts builds them). With a background thread, the work that answers no
 * request (the timer poller, the outbox sweeper) moves there; the two threads share the database as two
 * gateway processes do. More: docs/decisions/notes/timers-and-clock.md, "The background services".
 */
export function httpThreadServices(
  runtime: GatewayRuntime,
  opts: { backgroundThread: boolean; realtime: Realtime; graphql: Graphql },
): BackgroundService[] {
  return [
    // First, so it stops last: the request log entries of the final requests are written.
    requestLogService,
    // Before the payments core, so that its completion hook stays until no payment can succeed.
    checkoutLifecycleService(runtime),
    // Before the payments core, so that it stops after it: the core's last timers and queued hooks store
    // events whose deliveries this service must still create (a hook removed first marked them done
    // without any), and their attempts finish or are left to the next process before the database closes.
    webhookDeliveryService(runtime),
    opts.backgroundThread ? paymentsCoreHandlersService(runtime) : paymentsCoreService(runtime),
    realtimeService(runtime.hooks, opts.realtime),
    opts.graphql.service,
  ];
}

