import { isDeepStrictEqual } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { markerId, PaymentRollupModel, WebhookRollupModel } from '../../src/domain/overview/overviewRollupModel';
import { aggregateOverview, getOverview, type Overview, type OverviewRange } from '../../src/domain/overview/overviewService';
import { rebuildRollups } from '../../src/domain/overview/rollupRebuild';
import { rollupWritesSettled } from '../../src/domain/overview/rollupWrites';
import { createAccount, idempotencyKey, type TestAccount } from '../support/accounts';
import { advanceClock, createPayment, expressBody, getPayment, referenceBody } from '../support/payments';
import { startReceiver, type Receiver } from '../support/receiver';
import { sleep } from '../support/wait';
import { createEndpoint } from '../support/webhooks';
import { startGraphqlTestServer } from './support';

/**
 * The overview read from the hourly rollups (kept by $inc as payments and deliveries change) against
 * the same overview aggregated from the payments and deliveries themselves, over the same window, after
 * every kind of transition; and the rollups rebuilt from that aggregation against the incremental ones.
 */

let server: Awaited<ReturnType<typeof startGraphqlTestServer>>;
const receivers: Receiver[] = [];
beforeAll(async () => void (server = await startGraphqlTestServer()));
afterAll(async () => {
  await Promise.all(receivers.map((r) => r.close()));
  await server.stop();
});

/** A receiver answering `reply` (200 by default), closed after the file. */
async function receiver(reply?: Receiver['reply']): Promise<Receiver> {
  const r = await startReceiver();
  if (reply) r.reply = reply;
  receivers.push(r);
  return r;
}

/** Both overviews of the range over the window the rollup-based one used. */
async function bothOverviews(acct: TestAccount, range: OverviewRange) {
  await rollupWritesSettled();
  const rolled = await getOverview(acct.id, range);
  const aggregated = await aggregateOverview(acct.id, range, { from: rolled.from, to: rolled.to, n: rolled.buckets.length, bucketMs: rolled.bucketSeconds * 1000 });
  return { rolled, aggregated };
}

/**
 * Both overviews once they agree and `done` holds for the aggregated one (deliveries settle after the
 * request that caused them returns), or the last pair read.
 */
async function agreed(acct: TestAccount, range: OverviewRange, done: (o: Overview) => boolean) {
  let both = await bothOverviews(acct, range);
  for (let i = 0; i < 100 && !(done(both.aggregated) && isDeepStrictEqual(both.rolled, both.aggregated)); i++) {
    await sleep(200);
    both = await bothOverviews(acct, range);
  }
  return both;
}

/** An account's rollup documents, without counters at zero and without the markers' times. */
async function rollupDocs(acct: TestAccount) {
  const filter = { _id: { $gte: `${acct.id}|`, $lte: `${acct.id}|~` } };
  const drop0 = (v: unknown): unknown => {
    if (typeof v !== 'object' || v === null || v instanceof Date) return v;
    const entries = Object.entries(v)
      .filter(([k]) => k !== 'built_at')
      .map(([k, x]) => [k, drop0(x)] as const)
      .filter(([, x]) => x !== 0 && !(typeof x === 'object' && x !== null && Object.keys(x).length === 0));
    return Object.fromEntries(entries);
  };
  const read = async (model: typeof PaymentRollupModel | typeof WebhookRollupModel) =>
    ((await model.collection.find(filter as never).sort({ _id: 1 }).toArray()) as unknown[]).map(drop0);
  return { payments: await read(PaymentRollupModel), webhooks: await read(WebhookRollupModel) };
}

async function refund(acct: TestAccount, paymentId: string, amount?: number) {
  const res = await acct.api.post('/refunds', { payment_intent: paymentId, ...(amount && { amount }) }, { idempotencyKey: idempotencyKey() });
  expect(res.status, res.text).toBe(201);
}

describe('overview rollups', () => {
  it('answer what the aggregation answers through every transition, and rebuild to what $inc kept', async () => {
    const acct = await createAccount(server.baseUrl);
    const ok = await receiver();
    const dead = await receiver(() => ({ status: 500 }));
    let flakyFirst = true;
    const flaky = await receiver(() => {
      const status = flakyFirst ? 500 : 200;
      flakyFirst = false;
      return { status };
    });
    for (const r of [ok, dead, flaky]) await createEndpoint(acct.api, `${r.url}/hook`);

    // Express: succeeds (then refunded in part, or whole), rejected, provider down, unknown then reconciled.
    const partly = await createPayment(acct.api, expressBody('923000000', 10_000));
    const whole = await createPayment(acct.api, expressBody('923000000', 12_000));
    await createPayment(acct.api, expressBody('923000001', 7_000));
    await createPayment(acct.api, expressBody('923000004', 6_000));
    await createPayment(acct.api, expressBody('923000002', 8_000));
    // Reference: paid, cancelled, left to expire.
    const paid = await createPayment(acct.api, referenceBody(30_000));
    expect((await acct.api.post('/sandbox/simulate/reference_paid', { reference: paid.reference.number })).status).toBe(200);
    const cancelled = await createPayment(acct.api, referenceBody(40_000));
    expect((await acct.api.post(`/payment_intents/${cancelled.id}/cancel`)).status).toBe(200);
    await createPayment(acct.api, referenceBody(20_000));

    await advanceClock(acct.api, 40); // the rails settle, the reconciliation included
    await refund(acct, partly.id, 4_000);
    await refund(acct, whole.id);
    await advanceClock(acct.api, 10); // the refunds complete
    expect((await getPayment(acct.api, partly.id)).status).toBe('PARTIALLY_REFUNDED');
    expect((await getPayment(acct.api, whole.id)).status).toBe('REFUNDED');
    await advanceClock(acct.api, 600); // every retry of the dead endpoint: dead letters
    await advanceClock(acct.api, 73 * 3600); // the unpaid reference expires, in the hour it was created
    await createPayment(acct.api, expressBody('923000000', 5_000)); // and one in the last 24 hours
    await advanceClock(acct.api, 600); // its payment settles, its deliveries are delivered or dead-lettered

    const settled = await agreed(acct, 'LAST_7_DAYS', (o) => o.webhooks.pending === 0);
    const week = settled.aggregated;
    expect(settled.rolled).toEqual(week);
    const statuses = Object.fromEntries(week.buckets.flatMap((b) => b.byStatus).map((s) => [s.status, 0]));
    for (const s of week.buckets.flatMap((b) => b.byStatus)) statuses[s.status]! += s.count;
    expect(statuses).toEqual({ SUCCEEDED: 3, PARTIALLY_REFUNDED: 1, REFUNDED: 1, FAILED: 2, CANCELLED: 1, EXPIRED: 1 });
    expect(week.webhooks.failed).toBeGreaterThan(0);
    expect(week.webhooks.delivered).toBeGreaterThan(0);
    expect(week.webhooks.lagP95Ms).not.toBeNull();
    const day = await bothOverviews(acct, 'LAST_24_HOURS');
    expect(day.rolled).toEqual(day.aggregated);
    expect(day.rolled.buckets.reduce((n, b) => n + b.count, 0)).toBe(1);

    // Rebuilt from the aggregation: the same documents as the $inc kept.
    const incremental = await rollupDocs(acct);
    await rebuildRollups(acct.id);
    expect(await rollupDocs(acct)).toEqual(incremental);

    // A count lost (a crash between a write and its $inc): the rebuild puts it back.
    await PaymentRollupModel.collection.updateOne({ _id: (incremental.payments[0] as { _id: string })._id } as never, { $inc: { 'm.multicaixa_express.SUCCEEDED.n': -1 } });
    expect((await bothOverviews(acct, 'LAST_7_DAYS')).rolled).not.toEqual(week);
    await rebuildRollups(acct.id);
    expect((await bothOverviews(acct, 'LAST_7_DAYS')).rolled).toEqual(week);
  });

  it('count payments created and moved at once, whose counts share one update per hour', async () => {
    const acct = await createAccount(server.baseUrl);
    // Created together, they land in one turn and one hour: their $incs are summed into one update.
    const created = await Promise.all(
      Array.from({ length: 24 }, (_, i) => createPayment(acct.api, i % 3 === 0 ? expressBody('923000000', 1_000 + i) : referenceBody(2_000 + i))),
    );
    const references = created.filter((p) => p.payment_method === 'multicaixa_reference');
    // Half the references cancelled at once: each moves from PENDING to CANCELLED in the same document.
    await Promise.all(references.slice(0, 8).map((p) => acct.api.post(`/payment_intents/${p.id}/cancel`)));
    await advanceClock(acct.api, 10); // the express payments succeed
    const settled = await agreed(acct, 'LAST_24_HOURS', () => true);
    expect(settled.rolled).toEqual(settled.aggregated);
    const statuses: Record<string, number> = {};
    for (const s of settled.aggregated.buckets.flatMap((b) => b.byStatus)) statuses[s.status] = (statuses[s.status] ?? 0) + s.count;
    expect(statuses).toEqual({ SUCCEEDED: 8, CANCELLED: 8, PENDING: 8 });
    const incremental = await rollupDocs(acct);
    await rebuildRollups(acct.id);
    expect(await rollupDocs(acct)).toEqual(incremental);
  });

  it('rebuilds once, on the first read, an account whose data predates its rollups', async () => {
    const acct = await createAccount(server.baseUrl);
    await createPayment(acct.api, expressBody('923000000', 9_000));
    await createPayment(acct.api, referenceBody(11_000));
    await advanceClock(acct.api, 10);
    await rollupWritesSettled();
    const filter = { _id: { $gte: `${acct.id}|`, $lte: `${acct.id}|~` } } as never;
    await Promise.all([PaymentRollupModel.collection.deleteMany(filter), WebhookRollupModel.collection.deleteMany(filter)]);

    const { rolled, aggregated } = await bothOverviews(acct, 'LAST_24_HOURS');
    expect(rolled).toEqual(aggregated);
    expect(rolled.methods.map((m) => m.count)).toEqual([1, 1]);
    expect(await PaymentRollupModel.collection.countDocuments({ _id: markerId(acct.id) } as never)).toBe(1);
  });

  it('stop counting the deliveries of a deleted endpoint', async () => {
    const acct = await createAccount(server.baseUrl);
    const r = await receiver();
    await createEndpoint(acct.api, `${r.url}/hook`);
    const gone = await createEndpoint(acct.api, `${r.url}/gone`);
    await createPayment(acct.api, referenceBody(15_000));
    const both = await agreed(acct, 'LAST_24_HOURS', (o) => o.webhooks.delivered === 2);
    expect(both.rolled.webhooks).toMatchObject({ deliveries: 2, delivered: 2 });

    expect((await acct.api.delete(`/webhook_endpoints/${gone.id}`)).status).toBe(200);
    const after = await agreed(acct, 'LAST_24_HOURS', (o) => o.webhooks.deliveries === 1);
    expect(after.rolled).toEqual(after.aggregated);
    expect(after.rolled.webhooks).toMatchObject({ deliveries: 1, delivered: 1 });
  });

  it('are emptied by a sandbox reset, the account still built', async () => {
    const acct = await createAccount(server.baseUrl);
    await createPayment(acct.api, expressBody('923000000', 9_000));
    await createPayment(acct.api, referenceBody(11_000));
    expect((await bothOverviews(acct, 'LAST_24_HOURS')).rolled.methods).toHaveLength(2);

    expect((await acct.api.post('/sandbox/reset')).status).toBe(200);
    const { payments, webhooks } = await rollupDocs(acct);
    expect([...payments, ...webhooks]).toEqual([{ _id: markerId(acct.id) }, { _id: markerId(acct.id) }]);
    const { rolled, aggregated } = await bothOverviews(acct, 'LAST_24_HOURS');
    expect(rolled).toEqual(aggregated);
    expect(rolled.methods).toEqual([]);
  });
});
