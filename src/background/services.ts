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
 * The background services of each thread, in start order (stopped in reverse). Each is given the
 * settings of its gateway (no process-wide setting) from `config` at its start, and its
 * gateway's runtime (src/domain/gatewayRuntime.ts), on which it registers its hooks, timer handlers and
 * outboxes; the HTTP thread's, its realtime layer and GraphQL endpoint too (src/server.ts builds them).
 *
 * One thread (tests, BACKGROUND_THREAD=false): the HTTP thread runs everything.
 * With a background thread (`npm start`'s default, src/background/thread.ts), the work that is not an
 * answer to a request moves there: the timer poller (the rail's +2 s / +5 s, refunds, expiries, webhook
 * retries) and the outbox sweeper, with the webhooks of the events those timers store. The HTTP thread
 * keeps every timer handler registered (a sandbox clock advance runs an account's due timers in the
 * thread that serves it) and delivers the webhooks of the events it stores itself. The two threads share
 * the database as two gateway processes do: a claim decides who runs a timer, the unique index on
 * (event, endpoint) who creates a delivery. The background thread's own list is in workerServices.ts
 * (its bundle carries none of the HTTP side).
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

