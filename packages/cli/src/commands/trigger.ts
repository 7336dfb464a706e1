import type { PgwClient } from '@pgw/client';
import { apiClient } from '../api';
import { resolveConnection, type ConnectionFlags } from '../connection';
import { apiFailure, UsageError } from '../errors';
import { createOutput, type Output } from '../output';
import { parseOverrides, type TriggerOverrides } from '../overrides';
import { RAIL_ADVANCE_SECONDS, REFERENCE_VALIDITY_SECONDS, SCENARIOS, type Scenario } from '../scenarios';
import { advanceClock } from './clock';
import { printable } from '../printable';

export interface TriggerOptions extends ConnectionFlags {
  json?: boolean;
  amount?: string;
  mobile?: string;
  metadata?: string[];
}

type Intent = { id: string; status: string; failure_code?: string | null; amount: number; amount_refunded: number; reference?: { number: string } | null };

/**
 * `pgw trigger <scenario>`: makes what the scenario needs, moves the account's sandbox clock instead of
 * waiting for the rail, and prints the payment intent once it is in the scenario's final state (the
 * intent as JSON with --json).
 */
export async function trigger(name: string, opts: TriggerOptions): Promise<void> {
  const scenario = SCENARIOS[name];
  if (!scenario) throw new UsageError(`unknown scenario '${name}'; one of: ${Object.keys(SCENARIOS).join(', ')}`);
  const overrides = parseOverrides(name, scenario, opts);
  const conn = resolveConnection(opts);
  const out = createOutput(opts);
  const api = apiClient(conn);

  out.progress(`${name}: creating the payment`);
  const { intent: created, checkoutSession } = await createPayment(api, scenario, overrides);
  await afterCreation(api, out, scenario, created);
  out.progress(`${name}: waiting for ${scenario.finalStatus}`);
  const intent = await waitForStatus(api, created.id, scenario.finalStatus);
  if (checkoutSession) await waitForSession(api, checkoutSession);

  if (out.json) return out.object(intent);
  const refunded = intent.amount_refunded ? `, ${printable(intent.amount_refunded)} refunded` : '';
  const session = checkoutSession ? `, checkout session ${printable(checkoutSession)} COMPLETED` : '';
  const status = printable(intent.failure_code ? `${intent.status} ${intent.failure_code}` : intent.status);
  out.line(`${name}: ${printable(intent.id)} ${out.paint(intent.failure_code ? 'yellow' : 'green', status)} (${printable(intent.amount)} AOA${refunded}${session})`);
}

async function createPayment(api: PgwClient, scenario: Scenario, o: TriggerOverrides): Promise<{ intent: Intent; checkoutSession?: string }> {
  const pay = scenario.pay;
  if ('checkout' in pay) {
    const { data: session } = await api.POST('/checkout/sessions', { body: { amount: o.amount, merchant_reference: 'pgw trigger' } });
    const { data: intent } = await api.POST('/public/checkout/sessions/{id}/payments', {
      params: { path: { id: session.id } },
      body: { payment_method: 'multicaixa_express', customer: { mobile: o.mobile ?? pay.checkout } },
    });
    return { intent: intent as Intent, checkoutSession: session.id };
  }
  const common = { amount: o.amount, currency: 'AOA' as const, merchant_reference: 'pgw trigger', ...(o.metadata ? { metadata: o.metadata } : {}) };
  const body =
    'express' in pay
      ? { ...common, payment_method: 'multicaixa_express' as const, customer: { mobile: o.mobile ?? pay.express } }
      : { ...common, payment_method: 'multicaixa_reference' as const };
  const { data } = await api.POST('/payment_intents', { body });
  return { intent: data as Intent };
}

async function afterCreation(api: PgwClient, out: Output, scenario: Scenario, intent: Intent): Promise<void> {
  switch (scenario.then) {
    case 'rail':
      out.progress(`advancing the sandbox clock ${RAIL_ADVANCE_SECONDS} s`);
      return void (await advanceClock(api, RAIL_ADVANCE_SECONDS));
    case 'pay_reference':
      out.progress('paying the reference');
      return void (await api.POST('/sandbox/simulate/reference_paid', { body: { reference: intent.reference!.number } }));
    case 'expire_reference':
      out.progress('advancing the sandbox clock 72 h');
      return void (await advanceClock(api, REFERENCE_VALIDITY_SECONDS));
    case 'refund_partial':
    case 'refund_full': {
      await advanceClock(api, RAIL_ADVANCE_SECONDS);
      await waitForStatus(api, intent.id, 'SUCCEEDED');
      out.progress('refunding');
      const amount = scenario.then === 'refund_partial' ? Math.floor(intent.amount / 2) : undefined;
      await api.POST('/refunds', { body: { payment_intent: intent.id, ...(amount ? { amount } : {}) } });
      return void (await advanceClock(api, RAIL_ADVANCE_SECONDS));
    }
  }
}

/** States an intent never leaves by itself: waiting longer for another one is pointless. */
const SETTLED = new Set(['SUCCEEDED', 'FAILED', 'CANCELLED', 'EXPIRED', 'PARTIALLY_REFUNDED', 'REFUNDED']);
/** The clock advance has fired every timer before answering; this only covers a busy gateway's lag. */
const WAIT_LIMIT_MS = 30_000;

async function waitForStatus(api: PgwClient, id: string, status: string): Promise<Intent> {
  return poll(async () => {
    const { data } = await api.GET('/payment_intents/{id}', { params: { path: { id } } });
    const intent = data as Intent;
    if (intent.status === status) return intent;
    if (SETTLED.has(intent.status) && !(status === 'PARTIALLY_REFUNDED' || status === 'REFUNDED')) {
      throw apiFailure('unexpected_status', `payment ${id} ended ${intent.status}, not ${status}`);
    }
    return null;
  }, `payment ${id} did not reach ${status}`);
}

async function waitForSession(api: PgwClient, id: string): Promise<void> {
  await poll(async () => {
    const { data } = await api.GET('/checkout/sessions/{id}', { params: { path: { id } } });
    return data.status === 'COMPLETED' ? data : null;
  }, `checkout session ${id} did not complete`);
}

async function poll<T>(read: () => Promise<T | null>, failure: string): Promise<T> {
  const deadline = Date.now() + WAIT_LIMIT_MS;
  for (let wait = 50; ; wait = Math.min(1000, wait * 2)) {
    const value = await read();
    if (value !== null) return value;
    if (Date.now() > deadline) throw apiFailure('timeout', `${failure} within ${WAIT_LIMIT_MS / 1000} s`);
    await new Promise((r) => setTimeout(r, wait));
  }
}
