import { describe, expect, expectTypeOf, it } from 'vitest';
import { computeWebhookSignature, constructEvent, isEventType, WebhookSignatureError, type Event, type EventOf } from '../src/index';

const SECRET = 'whsec_' + 'a'.repeat(32);
const OLD_SECRET = 'whsec_' + 'b'.repeat(32);
const NOW = 1_800_000_000;

const succeeded = JSON.stringify({
  id: 'evt_' + 'E'.repeat(24),
  object: 'event',
  type: 'payment.succeeded',
  livemode: false,
  created_at: '2026-11-21T10:00:00.000Z',
  data: { id: 'pay_' + 'P'.repeat(24), object: 'payment_intent', status: 'SUCCEEDED', amount: 5000 },
});

function header(body: string, t: number, ...secrets: string[]): string {
  return [`t=${t}`, ...secrets.map((s) => `v1=${computeWebhookSignature(s, t, body)}`)].join(',');
}

function reasonOf(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(WebhookSignatureError);
    return (err as WebhookSignatureError).reason;
  }
  throw new Error('expected a WebhookSignatureError');
}

describe('constructEvent', () => {
  it('returns the Event typed by its type: payment.succeeded narrows data to a PaymentIntent', () => {
    const event = constructEvent(Buffer.from(succeeded), header(succeeded, NOW, SECRET), SECRET, { now: NOW });
    expectTypeOf(event).toEqualTypeOf<Event>();
    if (event.type !== 'payment.succeeded') throw new Error(`got ${event.type}`);
    expectTypeOf(event).toEqualTypeOf<EventOf<'payment.succeeded'>>();
    expectTypeOf(event.data.status).toBeString();
    expect(event.data.id).toBe('pay_' + 'P'.repeat(24));
  });

  it('rotation: a header with the new and the old v1 verifies under either secret, or both held by the receiver', () => {
    const both = header(succeeded, NOW, SECRET, OLD_SECRET);
    expect(constructEvent(succeeded, both, SECRET, { now: NOW }).type).toBe('payment.succeeded');
    expect(constructEvent(succeeded, both, OLD_SECRET, { now: NOW }).type).toBe('payment.succeeded');
    // The receiver holds both secrets and the gateway signed with the old one only.
    expect(constructEvent(succeeded, header(succeeded, NOW, OLD_SECRET), [SECRET, OLD_SECRET], { now: NOW }).type).toBe('payment.succeeded');
    expect(reasonOf(() => constructEvent(succeeded, header(succeeded, NOW, OLD_SECRET), SECRET, { now: NOW }))).toBe('signature_mismatch');
  });

  it('tolerance: 600 s by default, configurable; outside it the delivery is refused', () => {
    const h = header(succeeded, NOW - 601, SECRET);
    expect(reasonOf(() => constructEvent(succeeded, h, SECRET, { now: NOW }))).toBe('timestamp_out_of_tolerance');
    expect(constructEvent(succeeded, h, SECRET, { now: NOW, tolerance: 700 }).type).toBe('payment.succeeded');
    expect(reasonOf(() => constructEvent(succeeded, header(succeeded, NOW - 11, SECRET), SECRET, { now: NOW, tolerance: 10 }))).toBe(
      'timestamp_out_of_tolerance',
    );
  });

  it('refuses a changed body, a malformed header, and a signed body that is not an event', () => {
    const h = header(succeeded, NOW, SECRET);
    expect(reasonOf(() => constructEvent(succeeded.replace('5000', '50000'), h, SECRET, { now: NOW }))).toBe('signature_mismatch');
    expect(reasonOf(() => constructEvent(succeeded, 'v1=abc', SECRET, { now: NOW }))).toBe('malformed_header');
    expect(reasonOf(() => constructEvent(succeeded, undefined, SECRET, { now: NOW }))).toBe('malformed_header');
    const notEvent = succeeded.replace('"object":"event"', '"object":"payment_intent"');
    expect(notEvent).not.toBe(succeeded);
    expect(reasonOf(() => constructEvent(notEvent, header(notEvent, NOW, SECRET), SECRET, { now: NOW }))).toBe('invalid_payload');
  });

  it('returns a genuine event of a type it does not know, for the receiver to acknowledge (EventType is an open set)', () => {
    const unknown = succeeded.replace('payment.succeeded', 'payment.teleported');
    const event = constructEvent(unknown, header(unknown, NOW, SECRET), SECRET, { now: NOW });
    expect(event.type as string).toBe('payment.teleported');
    expect(isEventType(event.type)).toBe(false);
    expect(isEventType('payment.succeeded')).toBe(true);
  });
});
