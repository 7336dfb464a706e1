import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { FINAL_STATUSES, PAYMENT_EVENT_TYPES } from '../../src/domain/payments/paymentStates';
import { renderPaymentPage } from '../../src/pages/paymentPage';
import { ROOT } from '../support/processes';

/**
 * The state table's FINAL_STATUSES is the one list of the states a payment stream closes on: the page
 * hands it to pay.js as data, and the script keeps no copy of its own.
 */
describe('final statuses reach the payment page from the state table', () => {
  const html = renderPaymentPage({
    kind: 'link',
    key: 'plink_x',
    merchantName: 'Shop',
    amount: 1000,
    description: null,
    methods: ['multicaixa_express'],
    payUrl: '/v1/public/payment_links/plink_x/payments',
  });

  it('the form carries FINAL_STATUSES in data-final-statuses', () => {
    const attr = /data-final-statuses="([^"]*)"/.exec(html)?.[1];
    expect(attr?.split(' ')).toEqual([...FINAL_STATUSES]);
  });

  it('the form carries the stream\'s event types (PAYMENT_EVENT_TYPES) in data-stream-events, and pay.js lists none itself', () => {
    const attr = /data-stream-events="([^"]*)"/.exec(html)?.[1];
    expect(attr?.split(' ')).toEqual([...PAYMENT_EVENT_TYPES]);
    const script = readFileSync(path.join(ROOT, 'src/pages/assets/pay.js'), 'utf8');
    expect(script).toContain("getAttribute('data-stream-events')");
    for (const type of PAYMENT_EVENT_TYPES) expect(script).not.toContain(`'${type}'`);
  });

  it('pay.js reads them from the page and names no status list itself', () => {
    const script = readFileSync(path.join(ROOT, 'src/pages/assets/pay.js'), 'utf8');
    expect(script).toContain("getAttribute('data-final-statuses')");
    // An array literal of statuses holding every final one would be a second copy of the rule.
    const lists = [...script.matchAll(/\[((?:\s*'[A-Z_]+'\s*,?)+)\]/g)].map((m) => [...m[1]!.matchAll(/'([A-Z_]+)'/g)].map((x) => x[1]));
    expect(lists.length).toBeGreaterThan(0); // the retryable statuses, a page rule of its own
    for (const list of lists) expect(FINAL_STATUSES.every((s) => list.includes(s)), list.join(' ')).toBe(false);
  });
});
