import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PaymentModel } from '../../src/domain/payments/paymentModel';
import { searchConditions } from '../../src/domain/payments/paymentSearch';
import { createAccount, type TestAccount } from '../support/accounts';
import { advanceClock, createPayment, expressBody, referenceBody } from '../support/payments';
import { errorCodes, gql, gqlData, startGraphqlTestServer } from './support';

/** Query.paymentIntents(filter:), the dashboard's search, over HTTP on the real gateway. */

const SEARCH = `query ($filter: PaymentIntentFilter, $first: Int, $after: String, $status: PaymentIntentStatus) {
  paymentIntents(filter: $filter, first: $first, after: $after, status: $status) {
    nodes { id status paymentMethod merchantReference createdAt }
    pageInfo { hasNextPage endCursor }
  }
}`;

let baseUrl: string;
let stop: () => Promise<void>;

beforeAll(async () => {
  const server = await startGraphqlTestServer({ RATE_LIMIT_PER_MINUTE: "100000" });
  baseUrl = server.baseUrl;
  stop = server.stop;
});

afterAll(() => stop());

async function search(acct: TestAccount, variables: Record<string, unknown>) {
  return (await gqlData(baseUrl, acct.sk, SEARCH, variables)).paymentIntents;
}

const ids = (page: { nodes: Array<{ id: string }> }) => page.nodes.map((n) => n.id);

describe('Query.paymentIntents(filter:)', () => {
  it('finds a payment by its id, merchant reference, customer mobile (three spellings) and reference number', async () => {
    const acct = await createAccount(baseUrl);
    const express = await createPayment(acct.api, expressBody('923456789', 10_000, { merchant_reference: 'order-42' }));
    const reference = await createPayment(acct.api, referenceBody(20_000, { merchant_reference: 'order-43' }));
    await createPayment(acct.api, expressBody('923000000', 5_000, { merchant_reference: 'order-44' }));
    const other = await createAccount(baseUrl);
    await createPayment(other.api, expressBody('923456789', 10_000, { merchant_reference: 'order-42' }));

    for (const term of [express.id, 'order-42', '  order-42  ', '923456789', '+244923456789', '244923456789']) {
      expect(ids(await search(acct, { filter: { search: term } })), term).toEqual([express.id]);
    }
    expect(reference.reference.number).toMatch(/^\d{9}$/);
    expect(ids(await search(acct, { filter: { search: reference.reference.number } }))).toEqual([reference.id]);
    expect(ids(await search(acct, { filter: { search: 'order-4' } }))).toEqual([]);
    expect(ids(await search(acct, { filter: { search: '+244923456780' } }))).toEqual([]);
    // Another account's payment is never found, not even by its id.
    const foreign = (await other.api.get('/payment_intents?limit=1')).body.data[0];
    expect(ids(await search(acct, { filter: { search: foreign.id } }))).toEqual([]);
    // An empty search filters nothing.
    expect(ids(await search(acct, { filter: { search: ' ' } }))).toHaveLength(3);
  });

  it('narrows by status, method and creation time, and keeps what both status arguments allow', async () => {
    const acct = await createAccount(baseUrl);
    const paid = await createPayment(acct.api, expressBody('923000000'));
    const failed = await createPayment(acct.api, expressBody('923000001'));
    await advanceClock(acct.api, 10);
    const later = await createPayment(acct.api, referenceBody());
    const cut = new Date(Date.parse(later.created_at)).toISOString();

    expect(ids(await search(acct, { filter: { status: ['SUCCEEDED'] } }))).toEqual([paid.id]);
    expect(ids(await search(acct, { filter: { status: ['SUCCEEDED', 'FAILED'] } }))).toEqual([failed.id, paid.id]);
    expect(ids(await search(acct, { filter: { status: ['SUCCEEDED', 'FAILED'] }, status: 'FAILED' }))).toEqual([failed.id]);
    expect(ids(await search(acct, { filter: { status: ['SUCCEEDED'] }, status: 'FAILED' }))).toEqual([]);
    expect(ids(await search(acct, { filter: { paymentMethod: 'MULTICAIXA_REFERENCE' } }))).toEqual([later.id]);
    expect(ids(await search(acct, { filter: { paymentMethod: 'MULTICAIXA_EXPRESS' } }))).toEqual([failed.id, paid.id]);
    expect(ids(await search(acct, { filter: { createdFrom: cut } }))).toEqual([later.id]);
    expect(ids(await search(acct, { filter: { createdTo: cut } }))).toEqual([failed.id, paid.id]);
    expect(ids(await search(acct, { filter: { createdFrom: cut, createdTo: cut } }))).toEqual([]);
    expect(ids(await search(acct, { filter: { search: '923000001', status: ['FAILED'], createdTo: cut } }))).toEqual([failed.id]);
    expect(ids(await search(acct, { filter: { search: '923000001', status: ['SUCCEEDED'] } }))).toEqual([]);
  });

  it('pages through 120 matching payments, newest first, to the last one', async () => {
    const acct = await createAccount(baseUrl);
    const created: string[] = [];
    for (let i = 0; i < 120; i += 10) {
      const batch = await Promise.all(Array.from({ length: 10 }, () => createPayment(acct.api, referenceBody(1_000, { merchant_reference: 'batch-7' }))));
      created.push(...batch.map((p) => p.id));
    }
    await createPayment(acct.api, referenceBody(1_000, { merchant_reference: 'batch-8' }));
    const newestFirst = (await acct.api.get('/payment_intents?limit=200')).body.data.filter((p: any) => p.merchant_reference === 'batch-7').map((p: any) => p.id);
    expect(newestFirst).toHaveLength(120);

    for (const filter of [{ search: 'batch-7' }, { paymentMethod: 'MULTICAIXA_REFERENCE', status: ['PENDING'] }]) {
      const seen: string[] = [];
      let after: string | null = null;
      let pages = 0;
      for (;;) {
        const page: any = await search(acct, { filter, first: 50, after });
        seen.push(...ids(page));
        pages++;
        if (!page.pageInfo.hasNextPage) break;
        after = page.pageInfo.endCursor;
      }
      const expected = filter.search ? newestFirst : (await acct.api.get('/payment_intents?limit=200')).body.data.map((p: any) => p.id);
      expect(seen).toEqual(expected);
      expect(seen).toContain(created[0]);
      expect(pages).toBe(3);
    }
  });

  it('refuses bad input with invalid_request', async () => {
    const acct = await createAccount(baseUrl);
    await createPayment(acct.api, referenceBody());
    const bad = [
      { filter: { createdFrom: 'yesterday' } },
      { filter: { createdFrom: '2026-01-02T00:00:00.000Z', createdTo: '2026-01-01T00:00:00.000Z' } },
      { filter: { search: 'x'.repeat(129) } },
      { filter: { status: ['NOT_A_STATUS'] } },
      { filter: {}, after: 'pi_doesnotexist' },
      { filter: {}, first: 0 },
    ];
    for (const variables of bad) {
      const res = await gql(baseUrl, acct.sk, SEARCH, variables);
      expect(errorCodes(res), JSON.stringify(variables)).toEqual(['invalid_request']);
      expect(res.body.data?.paymentIntents ?? null).toBeNull();
    }
    expect(ids(await search(acct, { filter: { search: 'x'.repeat(128) } }))).toEqual([]);
  });
});

describe('the search on the database', () => {
  it('answers each key from an index of its own, examining only what it returns', async () => {
    const acct = await createAccount(baseUrl);
    for (let i = 0; i < 40; i += 10) {
      await Promise.all(Array.from({ length: 10 }, (_, k) => createPayment(acct.api, referenceBody(1_000 + i + k, { merchant_reference: `order-${i + k}` }))));
    }
    const express = await createPayment(acct.api, expressBody('923456780', 10_000, { merchant_reference: 'order-x' }));
    const reference = await createPayment(acct.api, referenceBody(2_000, { merchant_reference: 'order-y' }));
    const plans = new Map<string, { stages: string[]; indexes: string[]; docs: number; returned: number }>();
    for (const term of [express.id, 'order-x', '923456780', reference.reference.number]) {
      for (const condition of searchConditions(term)) {
        const x: any = await PaymentModel.find({ account_id: acct.id, ...condition }).sort({ seq: -1 }).limit(26).explain('executionStats');
        const tree = { stages: [] as string[], indexes: [] as string[] };
        planOf(x.queryPlanner.winningPlan, tree);
        plans.set(Object.keys(condition)[0]!, { ...tree, docs: x.executionStats.totalDocsExamined, returned: x.executionStats.nReturned });
      }
    }
    expect([...plans.keys()].sort()).toEqual(['_id', 'customer.mobile', 'merchant_reference', 'merchant_reference_folded', 'reference.number']);
    for (const [key, plan] of plans) {
      expect(plan.stages, key).not.toContain('COLLSCAN');
      // Ids and reference numbers are unique: at most one document to sort. The others walk in `seq` order.
      if (key.startsWith('merchant_reference') || key === 'customer.mobile') expect(plan.stages, key).not.toContain('SORT');
      expect(plan.docs, key).toBeLessThanOrEqual(plan.returned);
      if (key !== '_id') expect(plan.indexes.join(), key).toContain(key);
    }
  });
});

function planOf(node: any, out: { stages: string[]; indexes: string[] }): void {
  if (!node || typeof node !== 'object') return;
  if (node.stage) out.stages.push(node.stage);
  if (node.indexName) out.indexes.push(node.indexName);
  planOf(node.inputStage, out);
  for (const s of node.inputStages ?? []) planOf(s, out);
}
