import { afterAll, describe, expect, it, vi } from 'vitest';

// The list's URL helpers share a module with the router, which listens to the window's history on load.
// Removed after the file: the worker's next files share its globals (isolate: false), and a `window`
// without `navigator` made Apollo Client's constructor throw in test/graphql/apolloClient.test.ts.
const fakeWindow = vi.hoisted(() => {
  if (globalThis.window) return false;
  Object.assign(globalThis, { window: { addEventListener: () => undefined } });
  return true;
});
afterAll(() => {
  if (fakeWindow) delete (globalThis as { window?: unknown }).window;
});
import { matchesFilters, pageFromQuery, pageToQuery, toGraphqlFilter, type PaymentFilters } from '../../src/dashboard/app/hooks/payments';
import type { PaymentRow } from '../../src/dashboard/app/payments';
import { createAccount } from '../support/accounts';
import { createPayment, expressBody, referenceBody } from '../support/payments';
import { sharedGateway } from '../support/server';
import { gqlData } from '../graphql/support';

/** The Payments page's URL and filter rules (src/dashboard/app/hooks/payments.ts), without a browser. */
const none: PaymentFilters = { search: '', status: '', method: '', from: '', to: '' };

const row: PaymentRow = {
  id: 'pay_abc',
  amount: 5000,
  currency: 'AOA',
  paymentMethod: 'MULTICAIXA_EXPRESS',
  status: 'FAILED',
  failureCode: 'REJECTED_BY_CUSTOMER',
  merchantReference: 'order-1',
  createdAt: '2026-11-25T10:00:00.000Z',
  updatedAt: '2026-11-25T10:00:05.000Z',
  customer: { mobile: '923000001' },
  reference: null,
};

describe('Payments page state', () => {
  it('round-trips search, filters and the cursor stack through the URL, in a fixed order', () => {
    const page = { filters: { ...none, search: 'order 1', status: 'FAILED' as const }, after: 'pay_3', back: ['pay_1', 'pay_2'] };
    const query = pageToQuery(page);
    expect(query).toBe('?search=order+1&status=FAILED&after=pay_3&back=pay_1%2Cpay_2');
    expect(pageFromQuery(new URLSearchParams(query))).toEqual(page);
    expect(pageToQuery({ filters: none, after: '', back: [] })).toBe('');
  });

  it('sends created dates as the start of the first day and the end of the last (createdTo is exclusive)', () => {
    expect(toGraphqlFilter({ ...none, from: '2026-11-25', to: '2026-11-30', method: 'MULTICAIXA_REFERENCE' })).toEqual({
      paymentMethod: 'MULTICAIXA_REFERENCE',
      createdFrom: '2026-11-25T00:00:00.000Z',
      createdTo: '2026-12-01T00:00:00.000Z',
    });
    expect(toGraphqlFilter(none)).toEqual({});
  });

  it('keeps a payment that arrived live only when it matches, as the server would', () => {
    expect(matchesFilters(row, none)).toBe(true);
    for (const search of ['pay_abc', 'order-1', 'ORDER-1', '923000001', '+244923000001']) expect(matchesFilters(row, { ...none, search }), search).toBe(true);
    // An id prefix needs 3 characters after pay_; a mobile is whole; a merchant reference is not a prefix.
    for (const search of ['pay_ab', '92300000', 'order-']) expect(matchesFilters(row, { ...none, search }), search).toBe(false);
    const ref = { ...row, customer: null, reference: { entity: '11111', number: '123456789', expiresAt: row.createdAt } };
    for (const search of ['123', '123456', '123456789']) expect(matchesFilters(ref, { ...none, search }), search).toBe(true);
    for (const search of ['12', '1234567890', '23456']) expect(matchesFilters(ref, { ...none, search }), search).toBe(false);
    expect(matchesFilters(row, { ...none, status: 'SUCCEEDED' })).toBe(false);
    expect(matchesFilters(row, { ...none, from: '2026-11-25', to: '2026-11-25' })).toBe(true);
    expect(matchesFilters(row, { ...none, from: '2026-11-26' })).toBe(false);
    expect(matchesFilters(row, { ...none, to: '2026-11-24' })).toBe(false);
  });
});

const SEARCH = `query ($search: String) { paymentIntents(first: 50, filter: { search: $search }) { nodes { id } } }`;

describe('Payments search through the gateway', () => {
  it('finds by a prefix of the id and of the reference number, and by merchant reference in any case', async () => {
    const { baseUrl } = await sharedGateway();
    const acct = await createAccount(baseUrl);
    const express = await createPayment(acct.api, expressBody('923456789', 10_000, { merchant_reference: 'Order-Mixed-7' }));
    const reference = await createPayment(acct.api, referenceBody(20_000, { merchant_reference: 'other' }));
    const found = async (search: string) => ((await gqlData(baseUrl, acct.sk, SEARCH, { search })).paymentIntents.nodes as Array<{ id: string }>).map((n) => n.id);

    expect(await found(express.id.slice(0, 7))).toContain(express.id);
    expect(await found(express.id.slice(0, 12))).toEqual([express.id]);
    expect(await found(express.id)).toEqual([express.id]);
    const number: string = reference.reference.number;
    expect(await found(number.slice(0, 5))).toEqual([reference.id]);
    expect(await found(number)).toEqual([reference.id]);
    for (const spelling of ['Order-Mixed-7', 'order-mixed-7', 'ORDER-MIXED-7']) expect(await found(spelling), spelling).toEqual([express.id]);
    // Too short to be a prefix, or a merchant reference's prefix: nothing.
    expect(await found(number.slice(0, 2))).toEqual([]);
    expect(await found('order-mixed')).toEqual([]);
    expect(await found('pay_')).toEqual([]);
  });
});
