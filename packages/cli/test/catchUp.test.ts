import { mkdtempSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { EventPage, GatewayEvent } from '../src/eventSocket';
import { collectMissed } from '../src/listen/catchUp';
import { Ledger } from '../src/listen/ledger';
import { parseDuration } from '../src/duration';

const ev = (id: string, type = 'payment.created') => ({ id, object: 'event', type, livemode: false, created_at: '2026-11-25T10:00:00.000Z', data: { id: 'pay_x' } }) as unknown as GatewayEvent;

/** Pages over a newest-first list as Query.events does (cursor = the last id of the page). */
function pager(newestFirst: GatewayEvent[], size = 3) {
  let reads = 0;
  const page = async (after: string | null): Promise<EventPage> => {
    reads++;
    const start = after === null ? 0 : newestFirst.findIndex((e) => e.id === after) + 1;
    const events = newestFirst.slice(start, start + size);
    return { events, hasNextPage: start + size < newestFirst.length, endCursor: events.at(-1)?.id ?? null };
  };
  return { page, reads: () => reads };
}

const all = () => true;

describe('listen catch-up (collectMissed)', () => {
  it('returns what came after the anchor, oldest first, and stops reading past the overlap', async () => {
    const list = Array.from({ length: 60 }, (_, i) => ev(`evt_${60 - i}`)); // evt_60 newest … evt_1
    const ledger = { anchor: 'evt_50', has: (id: string) => Number(id.slice(4)) <= 50 };
    const p = pager(list);
    const { events, truncated } = await collectMissed(p.page, ledger, all, { overlap: 5, maxScan: 1000 });
    expect(events.map((e) => e.id)).toEqual(['evt_51', 'evt_52', 'evt_53', 'evt_54', 'evt_55', 'evt_56', 'evt_57', 'evt_58', 'evt_59', 'evt_60']);
    expect(truncated).toBe(false);
    // 10 newer + the anchor + 5 of overlap + 1 to see past it = 17 events: 6 pages of 3, not all 20.
    expect(p.reads()).toBe(6);
  });

  it('picks up an event that became visible behind a newer one (just below the anchor, never handed on)', async () => {
    // evt_48 was numbered before evt_49/evt_50 but written after them: it was missed live.
    const list = ['evt_52', 'evt_51', 'evt_50', 'evt_49', 'evt_48', 'evt_47'].map((id) => ev(id));
    const handed = new Set(['evt_50', 'evt_49', 'evt_47']);
    const { events } = await collectMissed(pager(list).page, { anchor: 'evt_50', has: (id) => handed.has(id) }, all, { overlap: 5, maxScan: 100 });
    expect(events.map((e) => e.id)).toEqual(['evt_48', 'evt_51', 'evt_52']);
  });

  it('skips the types not asked for, and says when it stopped before finding the anchor', async () => {
    const list = Array.from({ length: 30 }, (_, i) => ev(`evt_${30 - i}`, i % 2 ? 'payment.succeeded' : 'payment.created'));
    const { events, truncated } = await collectMissed(
      pager(list, 5).page,
      { anchor: 'evt_gone', has: () => false },
      (e) => e.type === 'payment.succeeded',
      { overlap: 5, maxScan: 10 },
    );
    expect(truncated).toBe(true);
    expect(events.map((e) => e.type)).toEqual(Array(5).fill('payment.succeeded'));
  });
});

describe('listen ledger', () => {
  it('keeps the anchor and the ids on disk (0600) so that a new process resumes from them', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'pgw-ledger-'));
    try {
      const file = path.join(dir, 'pgw', 'ledger.json');
      const first = new Ledger(file);
      expect(first.initialized).toBe(false);
      first.baseline([ev('evt_2'), ev('evt_1')]);
      first.record('evt_3');
      expect(statSync(file).mode & 0o777).toBe(0o600);
      const second = new Ledger(file);
      expect(second.initialized).toBe(true);
      expect(second.anchor).toBe('evt_3');
      expect(['evt_1', 'evt_2', 'evt_3'].every((id) => second.has(id))).toBe(true);
      expect(second.has('evt_4')).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('clock durations', () => {
  it.each([
    ['90s', 90],
    ['30m', 1800],
    ['72h', 259_200],
    ['2d', 172_800],
    ['1h30m', 5400],
    ['45', 45],
  ])('%s = %i s', (text, seconds) => expect(parseDuration(text)).toBe(seconds));

  it.each(['0s', '366d', '10y', '', 'h', '-5s'])('%j is refused', (text) => expect(() => parseDuration(text)).toThrow(/duration/));
});
