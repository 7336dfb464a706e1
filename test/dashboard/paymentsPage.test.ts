import { describe, expect, it } from 'vitest';
import { matchesFilters, pageFromQuery, pageToQuery, toGraphqlFilter, type PaymentFilters } from '../../src/dashboard/app/hooks/payments';
import type { PaymentRow } from '../../src/dashboard/app/payments';

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
    for (const search of ['pay_abc', 'order-1', '923000001', '+244 923 000 001']) expect(matchesFilters(row, { ...none, search }), search).toBe(true);
    expect(matchesFilters(row, { ...none, search: 'pay_ab' })).toBe(false);
    expect(matchesFilters(row, { ...none, status: 'SUCCEEDED' })).toBe(false);
    expect(matchesFilters(row, { ...none, from: '2026-11-25', to: '2026-11-25' })).toBe(true);
    expect(matchesFilters(row, { ...none, from: '2026-11-26' })).toBe(false);
    expect(matchesFilters(row, { ...none, to: '2026-11-24' })).toBe(false);
  });
});
