import { describe, expect, expectTypeOf, it } from 'vitest';
import { createClient, type components, type PgwClient } from '../src/index';

/**
 * Compile-time checks: `npm run typecheck` (tsc over packages/) fails if a `@ts-expect-error` line below
 * compiles, i.e. if the client stopped rejecting a wrong body field, path parameter or value. Never
 * called: only its types matter.
 */
function wrongCallsDoNotCompile(client: PgwClient): void {
  // @ts-expect-error: `amount_aoa` is not a field of CreatePaymentIntentRequest
  void client.POST('/payment_intents', { body: { amount_aoa: 5000, currency: 'AOA', payment_method: 'multicaixa_express' } });
  // @ts-expect-error: `amount` must be a number
  void client.POST('/payment_intents', { body: { amount: '5000', currency: 'AOA', payment_method: 'multicaixa_express' } });
  // @ts-expect-error: the only currency is AOA
  void client.POST('/payment_intents', { body: { amount: 5000, currency: 'USD', payment_method: 'multicaixa_express' } });
  // @ts-expect-error: the path parameter is `id`, not `payment_intent`
  void client.GET('/payment_intents/{id}', { params: { path: { payment_intent: 'pay_x' } } });
  // @ts-expect-error: the path parameter is required
  void client.GET('/payment_intents/{id}');
  // @ts-expect-error: no such route
  void client.GET('/payments/{id}', { params: { path: { id: 'pay_x' } } });
  // @ts-expect-error: GET only on this path
  void client.POST('/account');
  // @ts-expect-error: the cursor is the iterator's to set
  void client.paginate('/payment_intents', { query: { starting_after: 'pay_x' } });
  // @ts-expect-error: `seconds` is required
  void client.POST('/sandbox/clock/advance', { body: {} });
  // The gateway refuses coming_soon methods (400 method_disabled): the client's types do too.
  // @ts-expect-error: `card` is not an active payment method
  void client.POST('/payment_intents', { body: { amount: 5000, currency: 'AOA', payment_method: 'card' } });
  // @ts-expect-error: `unitel_money` is not an active payment method
  void client.POST('/public/checkout/sessions/{id}/payments', { params: { path: { id: 'cs_x' } }, body: { payment_method: 'unitel_money' } });
  // @ts-expect-error: links take active methods only
  void client.POST('/payment_links', { body: { amount: 5000, methods: ['multicaixa_express', 'kwik'] } });
  // @ts-expect-error: the request schemas the client exports are narrowed the same way
  const body: components['schemas']['CreatePaymentIntentRequest'] = { amount: 5000, currency: 'AOA', payment_method: 'afrimoney' };
  void body;
}

describe('@pgw/client types', () => {
  it('answers are typed by the contract', () => {
    const client = createClient();
    type Created = Awaited<ReturnType<typeof client.POST<'/payment_intents', { body: components['schemas']['CreatePaymentIntentRequest'] }>>>;
    expectTypeOf<Created['data']>().toEqualTypeOf<components['schemas']['PaymentIntent']>();
    type Account = Awaited<ReturnType<typeof client.GET<'/account', undefined>>>;
    expectTypeOf<Account['data']['id']>().toBeString();
    // The Idempotency-Key header is optional for the caller (the client makes one).
    expectTypeOf(client.POST<'/payment_intents', { body: components['schemas']['CreatePaymentIntentRequest'] }>).toBeCallableWith('/payment_intents', {
      body: { amount: 5000, currency: 'AOA', payment_method: 'multicaixa_express' },
    });
    // Auto-pagination yields the list's items, and takes the route's query without the cursor.
    expectTypeOf<ReturnType<typeof client.paginate<'/payment_intents'>>>().toEqualTypeOf<AsyncIterable<components['schemas']['PaymentIntent']>>();
    expectTypeOf(client.paginate<'/payment_intents'>).toBeCallableWith('/payment_intents', { query: { status: 'SUCCEEDED', limit: 10 } });
    expect(typeof wrongCallsDoNotCompile).toBe('function');
  });
});
