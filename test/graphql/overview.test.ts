import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliveryPipeline, paymentPipeline } from '../../src/domain/overview/overviewPipelines';
import { PaymentModel } from '../../src/domain/payments/paymentModel';
import { WebhookDeliveryModel } from '../../src/domain/webhooks/webhookDeliveryModel';
import { createAccount, type TestAccount } from '../support/accounts';
import { advanceClock, createPayment, expressBody, referenceBody } from '../support/payments';
import { startReceiver, type Receiver } from '../support/receiver';
import { waitFor } from '../support/wait';
import { createEndpoint, deliveries } from '../support/webhooks';
import { errorCodes, gql, gqlData } from './support';
import { sharedGateway } from '../support/server';

/** Query.overview over HTTP on the real gateway: counts checked against the account's own payments. */

const OVERVIEW = `query ($range: OverviewRange) {
  overview(range: $range) {
    range from to bucketSeconds
    buckets { start count paidVolume byStatus { status count } }
    methods { method count paid failed successRate paidVolume }
    webhooks { deliveries delivered failed pending successRate lagP50Ms lagP95Ms buckets { start delivered failed pending lagP50Ms } }
  }
}`;

const PAID = ['SUCCEEDED', 'PARTIALLY_REFUNDED', 'REFUNDED'];

let baseUrl: string;
let stop: () => Promise<void>;
const receivers: Receiver[] = [];

beforeAll(async () => {
  const server = await sharedGateway();
  baseUrl = server.baseUrl;
  stop = server.stop;
});

afterAll(async () => {
  await Promise.all(receivers.map((r) => r.close()));
  await stop();
});

async function overview(acct: TestAccount, range: 'LAST_24_HOURS' | 'LAST_7_DAYS') {
  return (await gqlData(baseUrl, acct.sk, OVERVIEW, { range })).overview;
}

async function allPayments(acct: TestAccount): Promise<any[]> {
  const res = await acct.api.get('/payment_intents?limit=100');
  expect(res.status, res.text).toBe(200);
  return res.body.data;
}

/** What the overview should say, counted here from the payments REST lists. */
function expectedBuckets(payments: any[], from: string, bucketSeconds: number, n: number) {
  const buckets = Array.from({ length: n }, () => ({ count: 0, paidVolume: 0, byStatus: {} as Record<string, number> }));
  for (const p of payments) {
    const offset = Date.parse(p.created_at) - Date.parse(from);
    if (offset < 0) continue;
    const b = buckets[Math.min(n - 1, Math.floor(offset / (bucketSeconds * 1000)))]!;
    b.count++;
    b.byStatus[p.status] = (b.byStatus[p.status] ?? 0) + 1;
    if (PAID.includes(p.status)) b.paidVolume += p.amount;
  }
  return buckets;
}

function asCounted(buckets: any[]) {
  return buckets.map((b) => ({ count: b.count, paidVolume: b.paidVolume, byStatus: Object.fromEntries(b.byStatus.map((s: any) => [s.status, s.count])) }));
}

describe('Query.overview', () => {
  it('counts each bucket, status and method as the payments themselves say, across sandbox clock advances', async () => {
    const acct = await createAccount(baseUrl);
    const receiver = await startReceiver();
    receivers.push(receiver);
    await createEndpoint(acct.api, `${receiver.url}/hook`);

    // Three hours apart on the account's clock: two different hourly buckets.
    await createPayment(acct.api, expressBody('923000000', 10_000));
    await createPayment(acct.api, expressBody('923000000', 12_000));
    await createPayment(acct.api, expressBody('923000001', 7_000));
    await createPayment(acct.api, referenceBody(30_000));
    const cancelled = await createPayment(acct.api, referenceBody(40_000));
    expect((await acct.api.post(`/payment_intents/${cancelled.id}/cancel`)).status).toBe(200);
    await advanceClock(acct.api, 10); // the express rail settles
    await advanceClock(acct.api, 3 * 3600);
    await createPayment(acct.api, expressBody('923000000', 5_000));
    await createPayment(acct.api, referenceBody(20_000));
    await advanceClock(acct.api, 10);

    const payments = await allPayments(acct);
    expect(payments.map((p) => p.status).sort()).toEqual(['CANCELLED', 'FAILED', 'PENDING', 'PENDING', 'SUCCEEDED', 'SUCCEEDED', 'SUCCEEDED']);
    const day = await overview(acct, 'LAST_24_HOURS');
    expect(day.range).toBe('LAST_24_HOURS');
    expect(day.bucketSeconds).toBe(3600);
    expect(Date.parse(day.to) - Date.parse(day.from)).toBe(24 * 3600 * 1000);
    expect(day.buckets).toHaveLength(24);
    expect(day.buckets.map((b: any) => Date.parse(b.start) - Date.parse(day.from))).toEqual(Array.from({ length: 24 }, (_, i) => i * 3600 * 1000));
    const expected = expectedBuckets(payments, day.from, 3600, 24);
    expect(asCounted(day.buckets)).toEqual(expected);
    expect(day.buckets.filter((b: any) => b.count > 0)).toHaveLength(2);
    expect(day.buckets.reduce((n: number, b: any) => n + b.paidVolume, 0)).toBe(27_000);

    expect(day.methods).toEqual([
      { method: 'MULTICAIXA_EXPRESS', count: 4, paid: 3, failed: 1, successRate: 0.75, paidVolume: 27_000 },
      { method: 'MULTICAIXA_REFERENCE', count: 3, paid: 0, failed: 1, successRate: 0, paidVolume: 0 },
    ]);

    // One endpoint for every event, answering 200: each event of the range is one delivery, delivered.
    const events = (await acct.api.get('/events?limit=100')).body.data as any[];
    const settled = await waitFor(() => overview(acct, 'LAST_24_HOURS'), (o) => o.webhooks.pending === 0 && o.webhooks.deliveries === events.length);
    expect(settled.webhooks).toMatchObject({ deliveries: events.length, delivered: events.length, failed: 0, successRate: 1 });
    expect(settled.webhooks.lagP50Ms).toBeGreaterThanOrEqual(0);
    expect(settled.webhooks.lagP95Ms).toBeGreaterThanOrEqual(settled.webhooks.lagP50Ms);
    expect(settled.webhooks.buckets.map((b: any) => b.start)).toEqual(settled.buckets.map((b: any) => b.start));
    expect(settled.webhooks.buckets.reduce((n: number, b: any) => n + b.delivered, 0)).toBe(events.length);

    // Two days later the last 24 hours are empty (every bucket still there) and the week holds them all.
    await advanceClock(acct.api, 2 * 86400);
    const later = await overview(acct, 'LAST_24_HOURS');
    expect(later.buckets).toHaveLength(24);
    expect(later.buckets.every((b: any) => b.count === 0 && b.byStatus.length === 0)).toBe(true);
    expect(later.methods).toEqual([]);
    const week = await overview(acct, 'LAST_7_DAYS');
    expect(week.bucketSeconds).toBe(86400);
    expect(week.buckets).toHaveLength(7);
    expect(asCounted(week.buckets)).toEqual(expectedBuckets(await allPayments(acct), week.from, 86400, 7));
    expect(week.buckets.reduce((n: number, b: any) => n + b.count, 0)).toBe(7);
    expect(week.webhooks.delivered).toBe(events.length);
  });

  it('answers every bucket with zeros for an account without payments', async () => {
    const acct = await createAccount(baseUrl);
    for (const [range, n] of [['LAST_24_HOURS', 24], ['LAST_7_DAYS', 7]] as const) {
      const o = await overview(acct, range);
      expect(o.buckets).toHaveLength(n);
      expect(o.buckets.every((b: any) => b.count === 0 && b.paidVolume === 0 && b.byStatus.length === 0)).toBe(true);
      expect(o.methods).toEqual([]);
      expect(o.webhooks).toMatchObject({ deliveries: 0, delivered: 0, failed: 0, pending: 0, successRate: null, lagP50Ms: null, lagP95Ms: null });
      expect(o.webhooks.buckets).toHaveLength(n);
    }
  });

  it('measures the lag from the event to its successful attempt, and counts dead letters as failed', async () => {
    const acct = await createAccount(baseUrl);
    const flaky = await startReceiver();
    const broken = await startReceiver();
    receivers.push(flaky, broken);
    let first = true;
    flaky.reply = () => {
      const status = first ? 500 : 200;
      first = false;
      return { status };
    };
    broken.reply = () => ({ status: 500 });
    const good = await createEndpoint(acct.api, `${flaky.url}/hook`);
    const bad = await createEndpoint(acct.api, `${broken.url}/hook`);

    await createPayment(acct.api, referenceBody(25_000)); // one event: payment.created
    const retrying = (id: string) => waitFor(() => deliveries(acct.api, id), (d) => d.length === 1 && d[0].state === 'RETRYING');
    await Promise.all([retrying(good.id), retrying(bad.id)]);
    const pending = await overview(acct, 'LAST_24_HOURS');
    expect(pending.webhooks).toMatchObject({ deliveries: 2, delivered: 0, failed: 0, pending: 2, successRate: null, lagP50Ms: null });

    await advanceClock(acct.api, 10); // the first retry: the flaky receiver now answers 200
    const [delivered] = await waitFor(() => deliveries(acct.api, good.id), (d) => d[0]?.state === 'DELIVERED');
    await advanceClock(acct.api, 3600); // every retry of the broken one: dead letter
    await waitFor(() => deliveries(acct.api, bad.id), (d) => d[0]?.state === 'DEAD_LETTER');

    const [event] = (await acct.api.get('/events?limit=10')).body.data as any[];
    const lag = Date.parse(delivered.last_attempt_at) - Date.parse(event.created_at);
    expect(lag).toBeGreaterThanOrEqual(10_000); // the retry came 10 s of account time after the first attempt
    const o = await overview(acct, 'LAST_24_HOURS');
    // One delivered delivery: its bin's largest lag is its own.
    expect(o.webhooks).toMatchObject({ deliveries: 2, delivered: 1, failed: 1, pending: 0, successRate: 0.5, lagP50Ms: lag, lagP95Ms: lag });
    const bucket = o.webhooks.buckets.find((b: any) => b.delivered === 1);
    expect(bucket).toMatchObject({ failed: 1, pending: 0, lagP50Ms: lag });
  });

  it('needs both payment_intents:read and webhook_endpoints:read', async () => {
    const acct = await createAccount(baseUrl);
    for (const permissions of [['payment_intents:read'], ['webhook_endpoints:read']]) {
      const key = await acct.api.post('/api_keys', { name: permissions[0], permissions });
      expect(key.status, key.text).toBe(201);
      const res = await gql(baseUrl, key.body.secret, OVERVIEW, { range: 'LAST_24_HOURS' });
      expect(errorCodes(res)).toEqual(['permission_denied']);
    }
    const both = await acct.api.post('/api_keys', { name: 'both', permissions: ['payment_intents:read', 'webhook_endpoints:read'] });
    const res = await gql(baseUrl, both.body.secret, OVERVIEW, { range: 'LAST_7_DAYS' });
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.overview.buckets).toHaveLength(7);
  });
});

describe('the overview on the database', () => {
  it('reads only the account\'s range, through an index, for payments and deliveries', async () => {
    const acct = await createAccount(baseUrl);
    const busy = await createAccount(baseUrl);
    const receiver = await startReceiver();
    receivers.push(receiver);
    await createEndpoint(acct.api, `${receiver.url}/hook`);
    // Three payments two days ago, three now: the range holds the last three only.
    await Promise.all(Array.from({ length: 3 }, () => createPayment(acct.api, referenceBody())));
    await advanceClock(acct.api, 2 * 86400);
    await Promise.all(Array.from({ length: 3 }, () => createPayment(acct.api, referenceBody())));
    await Promise.all(Array.from({ length: 20 }, () => createPayment(busy.api, referenceBody())));
    await receiver.waitFor(() => true, 6);
    const to = new Date(Date.parse((await acct.api.get('/sandbox/clock')).body.now) + 1000);
    const window = { from: new Date(to.getTime() - 86_400_000), to, n: 24, bucketMs: 3_600_000 };
    for (const [model, pipeline] of [
      [PaymentModel, paymentPipeline(acct.id, window)],
      [WebhookDeliveryModel, deliveryPipeline(acct.id, window)],
    ] as const) {
      const x: any = await (model as typeof PaymentModel).aggregate(pipeline).explain('executionStats');
      const cursor = x.stages?.[0]?.$cursor ?? x;
      const plan = JSON.stringify(cursor.queryPlanner.winningPlan);
      expect(plan, plan).toContain('IXSCAN');
      expect(plan, plan).toContain(model === PaymentModel ? 'account_id_1_created_at_1' : 'account_id_1_event_created_at_1');
      expect(cursor.executionStats.totalDocsExamined).toBeLessThanOrEqual(3);
      expect(cursor.executionStats.nReturned).toBe(3);
    }
  });
});
