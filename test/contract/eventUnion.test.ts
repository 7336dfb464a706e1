// Event is a discriminated union on `type` (openapi.yaml components.schemas.Event and the webhook body):
// one schema per event type, whose `data` is the resource the specification's event table names. The
// generated validators enforce the pairing and the generated types narrow on it — the latter is checked
// at compile time by `npm run typecheck` (the functions below), the former at run time.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { components, webhooks } from '../../generated/openapi';
import { validators } from '../../generated/validators/index';
import { ROOT } from '../support/processes';

type Obj = Record<string, any>;
const doc = parse(readFileSync(path.join(ROOT, 'openapi.yaml'), 'utf8')) as Obj;
const schemas = doc.components.schemas as Record<string, Obj>;

/** shared/spec/payment-gateway-v1.md, "Events": what `data` is for each type. */
const DATA_OF_TYPE: Record<string, string> = {
  'payment.created': 'PaymentIntent',
  'payment.succeeded': 'PaymentIntent',
  'payment.failed': 'PaymentIntent',
  'payment.unknown': 'PaymentIntent',
  'payment.reconciled': 'PaymentIntent',
  'payment.expired': 'PaymentIntent',
  'payment.cancelled': 'PaymentIntent',
  'reference.paid': 'PaymentIntent',
  'refund.succeeded': 'Refund',
  'checkout.session.completed': 'CheckoutSession',
  'test.ping': 'TestPingData',
};

function deref(ref: string): Obj {
  return ref
    .slice(2)
    .split('/')
    .reduce<any>((acc, k) => acc?.[k], doc);
}

// ----- compile time: what a generated client (openapi-typescript) can do with an Event -----------------

type Schemas = components['schemas'];
type Event = Schemas['Event'];
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;

/** `type` narrows `data`: no cast needed to read a payment, a refund, a session or a ping. */
export function describeEvent(e: Event): string {
  switch (e.type) {
    case 'payment.succeeded':
    case 'reference.paid': {
      const payment: Schemas['PaymentIntent'] = e.data;
      return `${payment.id} ${payment.status}`;
    }
    case 'refund.succeeded': {
      const refund: Schemas['Refund'] = e.data;
      return `${refund.payment_intent} refunded ${refund.amount}`;
    }
    case 'checkout.session.completed': {
      const session: Schemas['CheckoutSession'] = e.data;
      return `${session.id} paid by ${session.payment_intent ?? '?'}`;
    }
    case 'test.ping':
      return e.data.message;
    default:
      return `${e.type} ${e.data.status}`;
  }
}

/** The union covers exactly the event types, and the webhook body is that union. */
export const typeLevel: [Equal<Event['type'], Schemas['EventType']>, Equal<webhooks['paymentEvent']['post']['requestBody']['content']['application/json'], Event>] = [
  true,
  true,
];

export function paymentSucceededIsNoRefund(e: Extract<Event, { type: 'payment.succeeded' }>): unknown {
  // @ts-expect-error the data of payment.succeeded is a PaymentIntent, not a Refund
  const refund: Schemas['Refund'] = e.data;
  return refund;
}

// ----- the contract --------------------------------------------------------------------------------

describe('Event: one schema per event type, discriminated by `type`', () => {
  const event = schemas.Event!;
  const types = schemas.EventType!.enum as string[];

  it('takes its event types from EventType, and the data of each from the specification', () => {
    expect(Object.keys(DATA_OF_TYPE).sort()).toEqual([...types].sort());
  });

  it('is a oneOf with a discriminator on `type` whose mapping names one schema per type', () => {
    expect(event.discriminator?.propertyName).toBe('type');
    const mapping = (event.discriminator?.mapping ?? {}) as Record<string, string>;
    expect(Object.keys(mapping).sort()).toEqual([...types].sort());
    expect(((event.oneOf ?? []) as Obj[]).map((b) => b.$ref).sort()).toEqual(Object.values(mapping).sort());
    expect(new Set(Object.values(mapping)).size).toBe(types.length);
  });

  it.each(types.map((t) => [t] as const))('%s: its schema fixes `type` and carries the right resource as `data`', (type) => {
    const ref = (event.discriminator?.mapping as Record<string, string> | undefined)?.[type];
    expect(ref, `mapping of ${type}`).toBeDefined();
    const branch = deref(ref!);
    expect(branch.type).toBe('object');
    expect(branch.additionalProperties).toBe(false);
    expect([...branch.required].sort()).toEqual(['created_at', 'data', 'id', 'livemode', 'object', 'sequence', 'type']);
    expect(branch.properties.type.const).toBe(type);
    expect(branch.properties.object.const).toBe('event');
    expect(branch.properties.data.$ref).toBe(`#/components/schemas/${DATA_OF_TYPE[type]}`);
  });

  it('is the body of the outbound webhook, with an example per kind of data', () => {
    const media = doc.webhooks.paymentEvent.post.requestBody.content['application/json'];
    expect(media.schema).toEqual({ $ref: '#/components/schemas/Event' });
    const exampleTypes = Object.values<Obj>(media.examples ?? {}).map((ex) => (ex.$ref ? deref(ex.$ref) : ex).value.type as string);
    const kinds = new Set(exampleTypes.map((t) => DATA_OF_TYPE[t]));
    expect([...kinds].sort()).toEqual([...new Set(Object.values(DATA_OF_TYPE))].sort());
  });
});

describe('generated validators hold `data` to the event type', () => {
  const examples = doc.components.examples as Record<string, { value: Obj }>;
  const sample: Record<string, Obj> = {
    PaymentIntent: examples.ExpressPaymentIntentSucceeded!.value,
    Refund: { ...examples.RefundPending!.value, status: 'SUCCEEDED' },
    CheckoutSession: { ...examples.CheckoutSessionOpen!.value, status: 'COMPLETED', payment_intent: 'pay_eUXbUg9VYwCJewNftSknGs1p' },
    TestPingData: { message: 'Test event from the payment gateway sandbox' },
  };
  /** Data of another kind than the type's. */
  const wrong: Record<string, string> = { PaymentIntent: 'Refund', Refund: 'PaymentIntent', CheckoutSession: 'PaymentIntent', TestPingData: 'PaymentIntent' };
  const eventOf = (type: string, data: Obj) => ({
    id: 'evt_KbDRoe7DDnnozY3aOwehgCVD',
    object: 'event',
    type,
    sequence: 1,
    livemode: false,
    created_at: '2026-11-21T10:00:05.000Z',
    data,
  });
  const checks: [string, (e: Obj) => boolean][] = [
    ['schema_Event', (e) => validators.schema_Event(e)],
    ['paymentEvent_body (webhook)', (e) => validators.paymentEvent_body(e)],
    ['listEvents_200', (e) => validators.listEvents_200({ object: 'list', data: [e], has_more: false })],
  ];

  it.each(checks)('%s accepts each type with its own data and refuses it with another', (_name, check) => {
    for (const [type, kind] of Object.entries(DATA_OF_TYPE)) {
      expect(check(eventOf(type, sample[kind]!)), `${type} with a ${kind}`).toBe(true);
      expect(check(eventOf(type, sample[wrong[kind]!]!)), `${type} with a ${wrong[kind]}`).toBe(false);
    }
    expect(check(eventOf('payment.teleported', sample.PaymentIntent!)), 'an unknown type').toBe(false);
  });
});
