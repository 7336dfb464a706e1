import mongoose from 'mongoose';
import { verifyWebhookSignature } from '../../../src/webhooks/verifySignature';
import type { Receiver } from '../../support/receiver';
import { sleep } from './fixtures';
import type { CreateRecord, LoadAccount } from './load';

/**
 * What the database says after a run, read through the API, and the invariants that prove nothing
 * was lost or done twice.
 */
export const FINAL_STATES = ['SUCCEEDED', 'FAILED', 'CANCELLED', 'EXPIRED', 'PARTIALLY_REFUNDED', 'REFUNDED'];
const PAID_STATES = ['SUCCEEDED', 'PARTIALLY_REFUNDED', 'REFUNDED'];

export interface AccountState {
  account: LoadAccount;
  payments: any[];
  /** Every event of the account (GraphQL `events`, paged), newest first; `type` in REST spelling. */
  events: Array<{ id: string; type: string; data: any }>;
  refunds: any[];
}

async function getJson(baseUrl: string, sk: string, path: string): Promise<any> {
  for (let attempt = 0; ; attempt++) {
    try {
      const res = await fetch(`${baseUrl}/v1${path}`, { headers: { authorization: `Bearer ${sk}` } });
      if (res.status === 200) return res.json();
      if (attempt > 20) throw new Error(`GET ${path}: ${res.status} ${await res.text()}`);
    } catch (err) {
      if (attempt > 20) throw err;
    }
    await sleep(250);
  }
}

/** Every payment intent of the account (GET /payment_intents, paged with starting_after). */
export async function allPayments(baseUrl: string, sk: string): Promise<any[]> {
  const out: any[] = [];
  for (;;) {
    const after = out.length ? `&starting_after=${out[out.length - 1].id}` : '';
    const page = await getJson(baseUrl, sk, `/payment_intents?limit=500${after}`);
    out.push(...page.data);
    if (page.data.length < 500) return out;
  }
}

/** Every event of the account. GET /events has no cursor, so this pages through GraphQL `events`. */
export async function allEvents(baseUrl: string, sk: string): Promise<AccountState['events']> {
  const out: AccountState['events'] = [];
  let after: string | null = null;
  for (;;) {
    const res = await fetch(`${baseUrl}/graphql`, {
      method: 'POST',
      headers: { authorization: `Bearer ${sk}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        query: 'query($after: String) { events(first: 100, after: $after) { nodes { id type data } pageInfo { hasNextPage endCursor } } }',
        variables: { after },
      }),
    });
    const body = (await res.json()) as any;
    if (body.errors?.length) throw new Error(`GraphQL events: ${JSON.stringify(body.errors)}`);
    const conn = body.data.events;
    for (const n of conn.nodes) out.push({ id: n.id, type: String(n.type).toLowerCase().replace(/_/g, '.'), data: n.data });
    if (!conn.pageInfo.hasNextPage) return out;
    after = conn.pageInfo.endCursor;
  }
}

export async function readState(baseUrl: string, account: LoadAccount, creates: CreateRecord[]): Promise<AccountState> {
  const [payments, events] = await Promise.all([allPayments(baseUrl, account.sk), allEvents(baseUrl, account.sk)]);
  const refundIds = [...new Set(creates.filter((c) => c.kind === 'refund' && c.account === account && c.id).map((c) => c.id!))];
  const refunds: any[] = [];
  for (const id of refundIds) refunds.push(await getJson(baseUrl, account.sk, `/refunds/${id}`));
  return { account, payments, events, refunds };
}

const count = (types: string[], t: string) => types.filter((x) => x === t).length;

/** Violations of the invariants (empty = all hold). */
export function checkInvariants(states: AccountState[], creates: CreateRecord[]): string[] {
  const v: string[] = [];
  for (const st of states) {
    const acct = st.account.id;
    const byPayment = new Map<string, string[]>();
    const refundEvents = new Map<string, number>();
    const eventIds = new Set<string>();
    for (const e of st.events) {
      if (eventIds.has(e.id)) v.push(`${acct}: event ${e.id} listed twice`);
      eventIds.add(e.id);
      if (e.type === 'refund.succeeded') refundEvents.set(e.data.id, (refundEvents.get(e.data.id) ?? 0) + 1);
      const pid = e.type === 'refund.succeeded' ? e.data.payment_intent : e.type.startsWith('payment.') || e.type === 'reference.paid' ? e.data.id : undefined;
      if (pid) byPayment.set(pid, [...(byPayment.get(pid) ?? []), e.type]);
    }

    // Payments: final, and their events say exactly what happened to them.
    const refundsByPayment = new Map<string, any[]>();
    for (const r of st.refunds) refundsByPayment.set(r.payment_intent, [...(refundsByPayment.get(r.payment_intent) ?? []), r]);
    for (const p of st.payments) {
      const types = byPayment.get(p.id) ?? [];
      const where = `${acct} ${p.id} (${p.payment_method} ${p.customer?.mobile ?? ''} ${p.status}; events ${types.join(',')})`;
      if (!FINAL_STATES.includes(p.status)) v.push(`${where}: not in a final state`);
      if (count(types, 'payment.created') !== 1) v.push(`${where}: ${count(types, 'payment.created')} payment.created`);
      for (const t of ['payment.succeeded', 'payment.failed', 'payment.cancelled', 'payment.expired', 'payment.unknown', 'payment.reconciled', 'reference.paid']) {
        if (count(types, t) > 1) v.push(`${where}: ${count(types, t)} × ${t}`);
      }
      const paid = PAID_STATES.includes(p.status);
      if (paid !== (count(types, 'payment.succeeded') === 1)) v.push(`${where}: status and payment.succeeded disagree`);
      if (p.status === 'FAILED' && count(types, 'payment.failed') !== 1) v.push(`${where}: FAILED without one payment.failed`);
      if (p.status === 'CANCELLED' && count(types, 'payment.cancelled') !== 1) v.push(`${where}: CANCELLED without one payment.cancelled`);
      if (p.status === 'EXPIRED' && count(types, 'payment.expired') !== 1) v.push(`${where}: EXPIRED without one payment.expired`);
      if (p.payment_method === 'multicaixa_reference' && paid && count(types, 'reference.paid') !== 1) v.push(`${where}: paid reference without one reference.paid`);
      // `types` is newest first: payment.reconciled follows payment.succeeded, reference.paid precedes it.
      const at = (t: string) => types.indexOf(t);
      if (at('payment.reconciled') >= 0 && at('payment.reconciled') > at('payment.succeeded')) v.push(`${where}: payment.reconciled is not after payment.succeeded`);
      if (at('reference.paid') >= 0 && at('payment.succeeded') >= 0 && at('reference.paid') < at('payment.succeeded')) v.push(`${where}: reference.paid is not before payment.succeeded`);

      const refunds = refundsByPayment.get(p.id) ?? [];
      const refunded = refunds.filter((r) => r.status === 'SUCCEEDED').reduce((s, r) => s + r.amount, 0);
      if (p.amount_refunded > p.amount) v.push(`${where}: refunded ${p.amount_refunded} > amount ${p.amount}`);
      if (refunded !== p.amount_refunded) v.push(`${where}: refunds sum to ${refunded}, amount_refunded is ${p.amount_refunded}`);
      const expected = p.amount_refunded === 0 ? undefined : p.amount_refunded === p.amount ? 'REFUNDED' : 'PARTIALLY_REFUNDED';
      if (expected && p.status !== expected) v.push(`${where}: amount_refunded ${p.amount_refunded} of ${p.amount} but status ${p.status}`);
      if (count(types, 'refund.succeeded') !== refunds.filter((r) => r.status === 'SUCCEEDED').length) v.push(`${where}: refund.succeeded events do not match its refunds`);
    }

    // Refunds: each completed exactly once; no refund the client did not get an answer for.
    for (const r of st.refunds) {
      if (r.status !== 'SUCCEEDED') v.push(`${acct} refund ${r.id}: ${r.status}`);
      if ((refundEvents.get(r.id) ?? 0) !== 1) v.push(`${acct} refund ${r.id}: ${refundEvents.get(r.id) ?? 0} refund.succeeded events`);
    }
    const knownRefunds = new Set(st.refunds.map((r) => r.id));
    for (const id of refundEvents.keys()) if (!knownRefunds.has(id)) v.push(`${acct}: refund ${id} exists but no create request was answered with it`);

    // Idempotency: one object per key; every payment is one the client was answered with.
    const mine = creates.filter((c) => c.account === st.account);
    const idsByKey = new Map<string, Set<string>>();
    for (const c of mine) if (c.id) idsByKey.set(c.key, new Set([...(idsByKey.get(c.key) ?? []), c.id]));
    for (const [key, ids] of idsByKey) if (ids.size > 1) v.push(`${acct}: key ${key} produced ${ids.size} objects: ${[...ids].join(', ')}`);
    const answered = new Map<string, string>();
    for (const c of mine) if (c.kind === 'payment' && c.id) answered.set(`mr-${c.key}`, c.id);
    const seenRefs = new Map<string, string>();
    for (const p of st.payments) {
      if (!p.merchant_reference) continue;
      const other = seenRefs.get(p.merchant_reference);
      if (other) v.push(`${acct}: ${other} and ${p.id} share merchant_reference ${p.merchant_reference}`);
      seenRefs.set(p.merchant_reference, p.id);
      const expectedId = answered.get(p.merchant_reference);
      if (expectedId !== p.id) v.push(`${acct}: ${p.id} (${p.merchant_reference}) is not the object its key was answered with (${expectedId ?? 'none'})`);
    }
    for (const [ref, id] of answered) if (!seenRefs.has(ref)) v.push(`${acct}: ${id} (${ref}) was answered 201 but is not listed`);
  }
  return v;
}

/** Waits until the receiver has every event id (at least once); returns the ids still missing. */
export async function waitForDeliveries(receiver: Receiver, eventIds: string[], timeoutMs: number): Promise<string[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const got = new Set(receiver.received.map((r) => String(r.headers['service-event-id'])));
    const missing = eventIds.filter((id) => !got.has(id));
    if (missing.length === 0 || Date.now() > deadline) return missing;
    await sleep(500);
  }
}

/** Deliveries whose signature does not verify with their endpoint's secret (by receiver path). */
export function badSignatures(receiver: Receiver, secrets: Record<string, string>): string[] {
  const bad: string[] = [];
  for (const r of receiver.received) {
    const secret = secrets[r.path];
    if (!secret) continue;
    try {
      // The signature's timestamp follows the account's sandbox clock, which the tests move forward.
      const event = verifyWebhookSignature(r.rawBody, String(r.headers['service-signature']), secret, Number.MAX_SAFE_INTEGER);
      if (event.id !== r.headers['service-event-id']) bad.push(`${r.path}: Service-Event-Id ${r.headers['service-event-id']} ≠ body id ${event.id}`);
    } catch (err) {
      bad.push(`${r.path} ${r.headers['service-event-id']}: ${(err as Error).message}`);
    }
  }
  return bad;
}

/** For a failure message: the stored timers and outbox of payments that are not final. */
export async function diagnoseOpenPayments(engineUri: string, states: AccountState[]): Promise<string> {
  const open = states.flatMap((s) => s.payments).filter((p) => !FINAL_STATES.includes(p.status)).map((p) => p.id);
  if (!open.length) return '';
  const conn = await mongoose.createConnection(engineUri).asPromise();
  try {
    const timers = await conn.collection('timers').find({ ref_id: { $in: open } }).toArray();
    const docs = await conn.collection('payment_intents').find({ _id: { $in: open as any[] } }).project({ status: 1, version: 1, pending_events: 1, updated_at: 1 }).toArray();
    return JSON.stringify({ now: Date.now(), timers, payments: docs }, null, 1);
  } finally {
    await conn.close();
  }
}
