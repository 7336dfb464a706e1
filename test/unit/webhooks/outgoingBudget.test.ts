import { describe, expect, it } from 'vitest';
import { MAX_KEYS, OutgoingBudget } from '../../../src/domain/webhooks/outgoingBudget';

describe('the outgoing webhook budget', () => {
  it('lets half the cap go at once, then refills at half the cap per minute', () => {
    const budget = new OutgoingBudget({ perAccountPerMinute: 60, perHostPerMinute: 1_000 });
    for (let i = 0; i < 30; i++) expect(budget.tryTake('acct', 'host', 1, 0)).toBe(0);
    expect(budget.tryTake('acct', 'host', 1, 0)).toBe(2_000);
    expect(budget.tryTake('acct', 'host', 1, 1_999)).toBeGreaterThan(0);
    expect(budget.tryTake('acct', 'host', 1, 2_000)).toBe(0);
    // A job of 3 requests waits for 3 tokens, and takes nothing meanwhile.
    expect(budget.tryTake('acct', 'host', 3, 4_000)).toBe(4_000);
    expect(budget.waitMs('acct', 'host', 1, 4_000)).toBe(0);
  });

  it('never lets more than the cap go in any 60 s, for an account or for a host shared by accounts', () => {
    const budget = new OutgoingBudget({ perAccountPerMinute: 120, perHostPerMinute: 90 });
    const sent: number[] = [];
    // Five accounts asking every 50 ms for ten minutes, all to one host.
    for (let t = 0; t < 600_000; t += 50) {
      for (let a = 0; a < 5; a++) if (budget.tryTake(`acct${a}`, 'victim.example', 1, t) === 0) sent.push(t);
    }
    let most = 0;
    for (let i = 0, j = 0; i < sent.length; i++) {
      while (sent[i]! - sent[j]! >= 60_000) j++;
      most = Math.max(most, i - j + 1);
    }
    expect(most).toBeLessThanOrEqual(90);
    expect(most).toBeGreaterThanOrEqual(88);
    // The first burst (half the cap), then 45 per minute: the budget is used, not only bounded.
    expect(sent.length).toBeLessThanOrEqual(45 + 45 * 10);
    expect(sent.length).toBeGreaterThanOrEqual(45 + 45 * 10 - 2);
  });

  it('holds at most MAX_KEYS hosts: a new one waits while every bucket is spent, and goes once one has refilled', () => {
    const budget = new OutgoingBudget({ perAccountPerMinute: 100_000_000, perHostPerMinute: 6 });
    for (let i = 0; i < MAX_KEYS; i++) expect(budget.tryTake('acct', `h${i}.example`, 3, 0)).toBe(0);
    expect(budget.sizes().hosts).toBe(MAX_KEYS);
    const wait = budget.tryTake('acct', 'one-more.example', 1, 1_000);
    expect(wait).toBeGreaterThan(0);
    expect(budget.tryTake('acct', 'one-more.example', 1, 1_000 + wait)).toBe(0);
    expect(budget.sizes().hosts).toBeLessThanOrEqual(MAX_KEYS);
  });
});
