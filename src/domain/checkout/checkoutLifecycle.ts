import type { BackgroundService } from '../../platform/lifecycle';
import type { StoredEvent } from '../events/eventHooks';
import type { EventSink } from '../events/outbox';
import type { GatewayRuntime } from '../gatewayRuntime';
import { CheckoutSessionModel } from './checkoutSessionModel';
import { nowForAccount } from '../clock/accountTime';
import { PaymentModel, type PaymentRecord } from '../payments/paymentModel';
import { releaseCheckoutClaim } from './checkoutClaim';
import { CHECKOUT_EXPIRY_TIMER, completeCheckoutSession, expireCheckoutSession } from './checkoutSessionService';

/**
 * Wires checkout sessions to one gateway at its start: a stored `payment.succeeded` completes its session, a
 * payment that ends unpaid gives the claim back, a durable timer expires the session, and the collection is
 * an outbox. The hooks run at least once after the event is durable, so a crash in between is repaired by the
 * sweeper. More: docs/decisions/notes/checkout.md, "The session lifecycle".
 */
function registerCheckoutLifecycle(runtime: GatewayRuntime): void {
  runtime.outboxes.register(CheckoutSessionModel);
  runtime.timers.register(CHECKOUT_EXPIRY_TIMER, async (timer, { now }) => {
    await expireCheckoutSession(timer.refId, now);
  });
  runtime.hooks.onEventStored(releaseSessionOnPaymentEnd, { name: 'checkout.release' });
}

/** Payment events after which the payment can never be paid. */
const ENDED_UNPAID_EVENTS: ReadonlySet<string> = new Set(['payment.failed', 'payment.cancelled', 'payment.expired']);

/** `publicBaseUrl`: the gateway's, for the session URL in the `checkout.session.completed` event. */
export async function completeSessionOnPayment(sink: EventSink, event: StoredEvent, publicBaseUrl: string): Promise<void> {
  if (event.type !== 'payment.succeeded') return;
  const page = await checkoutPaymentOf(event);
  if (!page) return;
  // The event's time, not the wall clock: during a sandbox clock advance they differ.
  await completeCheckoutSession(sink, event.accountId, page.sessionId, page.paymentId, event.createdAt, publicBaseUrl);
}

export async function releaseSessionOnPaymentEnd(event: StoredEvent): Promise<void> {
  if (!ENDED_UNPAID_EVENTS.has(event.type)) return;
  const page = await checkoutPaymentOf(event);
  if (!page) return;
  await releaseCheckoutClaim(page.sessionId, page.paymentId);
  // The later of the event's time and the account's clock: during a clock advance the event is dated at
  // its timer's due time, ahead of the clock; a hook that runs late is behind the clock.
  const now = new Date(Math.max(event.createdAt.getTime(), (await nowForAccount(event.accountId)).getTime()));
  await expireCheckoutSession(page.sessionId, now);
}

/**
 * The checkout session a payment event's payment was made on: its `checkout_session_id`, which only the
 * checkout page sets, never a session its metadata merely names (API callers could store
 * `metadata.checkout_session` before that key was refused, 144008c). Page payments carry the metadata
 * too, so it spares the read for every other payment.
 */
async function checkoutPaymentOf(event: StoredEvent): Promise<{ sessionId: string; paymentId: string } | null> {
  const metadata = event.data.metadata as Record<string, unknown> | undefined;
  const named = metadata?.checkout_session;
  const paymentId = event.data.id;
  if (typeof named !== 'string' || typeof paymentId !== 'string') return null;
  const payment = await PaymentModel.findById(paymentId, { checkout_session_id: 1 }).lean<Pick<PaymentRecord, 'checkout_session_id'>>();
  return payment?.checkout_session_id === named ? { sessionId: named, paymentId } : null;
}

/**
 * For src/server.ts `backgroundServices()`: registers the hooks, the timer handler and the outbox. The
 * completion hook is this gateway's own, with the public base URL of the Config it is started with (known
 * once the port is), so it comes and goes with the service; server.ts starts it before the payments core
 * so that it stops after it (no payment can succeed once the hook is gone).
 */
export function checkoutLifecycleService(runtime: GatewayRuntime): BackgroundService {
  let removeCompletion: (() => void) | null = null;
  let registered = false;
  return {
    name: 'checkout-lifecycle',
    start: ({ config }) => {
      removeCompletion ??= runtime.hooks.onEventStored((event) => completeSessionOnPayment(runtime, event, config.publicBaseUrl), { name: 'checkout.complete' });
      if (!registered) registerCheckoutLifecycle(runtime);
      registered = true;
    },
    stop: () => {
      removeCompletion?.();
      removeCompletion = null;
    },
  };
}
