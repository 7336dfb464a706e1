import { onEventStored, type StoredEvent } from '../events/event.hooks';
import { registerOutbox } from '../events/outbox';
import { registerTimerHandler } from '../../jobs/timers/timer.service';
import { CheckoutSessionModel } from './checkoutSession.model';
import { nowForAccount } from '../clock/clock';
import { releaseCheckoutClaim } from './checkoutClaim';
import { CHECKOUT_EXPIRY_TIMER, completeCheckoutSession, expireCheckoutSession } from './checkoutSession.service';

/**
 * Wires checkout sessions to the rest of the gateway, once per process, at start:
 * - completion: the `onEventStored` hook sees every stored `payment.succeeded`; one whose intent carries
 *   `metadata.checkout_session` completes that session (idempotent conditional update OPEN → COMPLETED,
 *   which also emits `checkout.session.completed`). Hooks run at least once, after the event is durable,
 *   so a crash between the payment succeeding and the session completing is repaired by the sweeper.
 * - release: a stored `payment.failed`, `payment.cancelled` or `payment.expired` of a session's payment
 *   gives back the session's claim (checkoutClaim.ts), conditional on the claim still naming that
 *   payment, so the customer can try again; and a session past its 30 minutes, which was following
 *   that payment, expires then (a reference that expires at +72 h ends its session with it). Same
 *   at-least-once hooks, so a crash between the payment ending and the release is repaired the same way.
 * - expiry: the durable timer scheduled at creation moves OPEN → EXPIRED (sandbox clock aware), unless
 *   the session follows a PENDING reference payment (expireCheckoutSession).
 * - the session collection is an event outbox, swept like the payments one.
 */
let registered = false;

export function registerCheckoutLifecycle(): void {
  if (registered) return;
  registered = true;
  registerOutbox(CheckoutSessionModel);
  registerTimerHandler(CHECKOUT_EXPIRY_TIMER, async (timer, { now }) => {
    await expireCheckoutSession(timer.refId, now);
  });
  onEventStored(completeSessionOnPayment, { name: 'checkout.complete' });
  onEventStored(releaseSessionOnPaymentEnd, { name: 'checkout.release' });
}

/** Payment events after which the payment can never be paid. */
const ENDED_UNPAID_EVENTS = new Set(['payment.failed', 'payment.cancelled', 'payment.expired']);

export async function completeSessionOnPayment(event: StoredEvent): Promise<void> {
  if (event.type !== 'payment.succeeded') return;
  const metadata = event.data.metadata as Record<string, unknown> | undefined;
  const sessionId = metadata?.checkout_session;
  const paymentId = event.data.id;
  if (typeof sessionId !== 'string' || typeof paymentId !== 'string') return;
  // The event's time, not the wall clock: during a sandbox clock advance they differ.
  await completeCheckoutSession(event.accountId, sessionId, paymentId, event.createdAt);
}

export async function releaseSessionOnPaymentEnd(event: StoredEvent): Promise<void> {
  if (!ENDED_UNPAID_EVENTS.has(event.type)) return;
  const metadata = event.data.metadata as Record<string, unknown> | undefined;
  const sessionId = metadata?.checkout_session;
  const paymentId = event.data.id;
  if (typeof sessionId !== 'string' || typeof paymentId !== 'string') return;
  await releaseCheckoutClaim(sessionId, paymentId);
  // The later of the event's time and the account's clock: during a clock advance the event is dated at
  // its timer's due time, ahead of the clock; a hook that runs late is behind the clock.
  const now = new Date(Math.max(event.createdAt.getTime(), (await nowForAccount(event.accountId)).getTime()));
  await expireCheckoutSession(sessionId, now);
}

/** For src/server.ts `backgroundServices()`: registers the hook, the timer handler and the outbox. */
export const checkoutLifecycleService = {
  name: 'checkout-lifecycle',
  start: () => registerCheckoutLifecycle(),
  stop: () => undefined,
};
