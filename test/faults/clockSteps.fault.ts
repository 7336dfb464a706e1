import { existsSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, type TestAccount } from '../support/accounts';
import { expressBody, referenceBody } from '../support/payments';
import { spawnGateway, type GatewayProcess } from '../support/processes';
import { sleep } from './support/fixtures';

/**
 * Clock steps (issue 41, part 6): a real gateway child process runs under libfaketime (Debian's
 * `faketime` package) with only its wall clock faked (FAKETIME_DONT_FAKE_MONOTONIC=1), as an NTP step
 * would move it; the offset is a file the test rewrites (FAKETIME_TIMESTAMP_FILE, FAKETIME_NO_CACHE=1
 * so that each clock read sees the file as it is). Everything is measured on the test's own monotonic
 * clock (performance.now(); this process is not under faketime):
 * - express payments in flight while the clock steps back 1 h, then forward 1 h, then forward 1 h
 *   more: every rail step (PROCESSING at +2 s, SUCCEEDED at +5 s) is observed no earlier than its due
 *   time after the request was sent, and no later than its due time + 2 s after the answer came back;
 *   reference payments in flight stay PENDING (their 72 h expiry fires neither early nor at all);
 * - a key at its rate limit is not locked out by a step back (2xx once its minute has passed in real
 *   time), and gets no second allowance from a step forward (no more than the limit within one real
 *   minute).
 * Skipped, loudly, where libfaketime is not installed (`apt-get install faketime`).
 */
const FAKETIME_DIR = '/usr/lib/x86_64-linux-gnu/faketime';
// The pthread-safe build where there is one: node reads the clock from several threads (the engine's
// worker, libuv's pool).
const LIBFAKETIME = ['libfaketimeMT.so.1', 'libfaketime.so.1'].map((f) => path.join(FAKETIME_DIR, f)).find((f) => existsSync(f));
const HAVE_FAKETIME = LIBFAKETIME !== undefined;
if (!HAVE_FAKETIME) {
  console.warn(`clockSteps.fault.ts SKIPPED: no libfaketime in ${FAKETIME_DIR} (Debian/Ubuntu: apt-get install -y faketime); clock steps are not tested`);
}

const HOUR = 3_600_000;
/** How often the test reads each payment: observations are at most this (plus a round trip) after a change. */
const POLL_MS = 100;
/** The contract: never early, never later than the due time + 2 s. */
const LATE_MS = 2_000;
const RATE_LIMIT = 5;

interface FakeClock {
  file: string;
  env: Record<string, string>;
  /** Sets the gateway's wall clock to real time + `offsetMs` (a step, for a running process). */
  set(offsetMs: number): void;
}

function fakeClock(dir: string, name: string): FakeClock {
  const file = path.join(dir, `${name}.faketime`);
  const clock: FakeClock = {
    file,
    env: {
      LD_PRELOAD: LIBFAKETIME!,
      FAKETIME_TIMESTAMP_FILE: file,
      FAKETIME_NO_CACHE: '1',
      FAKETIME_DONT_FAKE_MONOTONIC: '1',
    },
    set(offsetMs: number) {
      // libfaketime's relative offset syntax: "+3600s", "-3600s", "+0s" (seconds from real time).
      const s = Math.round(offsetMs / 1000);
      // Written aside and renamed: a clock read never sees the file empty or half written.
      writeFileSync(`${file}.tmp`, `${s >= 0 ? '+' : ''}${s}s\n`);
      renameSync(`${file}.tmp`, file);
    },
  };
  clock.set(0);
  return clock;
}

/** The gateway's wall clock minus the test's, from its Date header (whole seconds). */
async function gatewayClockOffset(gw: GatewayProcess): Promise<number> {
  const before = Date.now();
  const res = await fetch(`${gw.url}/healthz`);
  const after = Date.now();
  const date = Date.parse(res.headers.get('date') ?? '');
  return date - (before + after) / 2;
}

/**
 * Waits until the gateway's Date header shows the wall clock at `offsetMs` from real time (whole
 * seconds; node refreshes the header's text once a second, so a step shows within about 1 s).
 */
async function expectClockOffset(gw: GatewayProcess, offsetMs: number): Promise<void> {
  const until = performance.now() + 4_000;
  let seen = await gatewayClockOffset(gw);
  while (Math.abs(seen - offsetMs) >= 2_000 && performance.now() < until) {
    await sleep(100);
    seen = await gatewayClockOffset(gw);
  }
  expect(Math.abs(seen - offsetMs), `gateway clock offset ${seen} ms, wanted ${offsetMs} ms: is libfaketime in effect?`).toBeLessThan(2_000);
}

interface Tracked {
  id: string;
  label: string;
  sentAt: number;
  answeredAt: number;
  /** status → first time (test monotonic) it was seen. */
  firstSeen: Map<string, number>;
  /** status → last time (answer received) it was still seen before the next status. */
  lastSeen: Map<string, number>;
  status: string;
}

async function create(account: TestAccount, body: Record<string, unknown>, label: string): Promise<Tracked> {
  const sentAt = performance.now();
  const res = await account.api.post('/payment_intents', body, { idempotencyKey: `clock-${label}-${Math.random().toString(36).slice(2)}` });
  const answeredAt = performance.now();
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  const t: Tracked = { id: res.body.id, label, sentAt, answeredAt, firstSeen: new Map(), lastSeen: new Map(), status: res.body.status };
  t.firstSeen.set(res.body.status, answeredAt);
  t.lastSeen.set(res.body.status, answeredAt);
  return t;
}

describe.skipIf(!HAVE_FAKETIME)('clock steps under libfaketime', () => {
  let dir: string;
  let railClock: FakeClock;
  let rateClock: FakeClock;
  let rail: GatewayProcess;
  let rate: GatewayProcess;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'pgw-clock-'));
    railClock = fakeClock(dir, 'rail');
    rateClock = fakeClock(dir, 'rate');
    // The embedded engine runs in a worker thread of the gateway: the same LD_PRELOAD, the same clock.
    [rail, rate] = await Promise.all([
      spawnGateway('', { ...railClock.env, DATA_DIR: '', TIMER_POLL_MS: '100' }),
      spawnGateway('', { ...rateClock.env, DATA_DIR: '', RATE_LIMIT_PER_MINUTE: String(RATE_LIMIT), RATE_LIMIT_PER_ACCOUNT_PER_MINUTE: '1000' }),
    ]);
  }, 120_000);

  afterAll(async () => {
    await Promise.all([rail?.stop(), rate?.stop()]);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('fires no rail step early and none later than due + 2 s while the clock steps back 1 h and forward 1 h twice', async () => {
    await expectClockOffset(rail, 0);
    const account = await createAccount(rail.url, 'clock steps: rail');
    const tracked: Tracked[] = [];
    const stepAt: Record<string, number> = {};
    let polling = true;

    const poller = (async () => {
      while (polling) {
        const open = tracked.filter((t) => !['SUCCEEDED', 'FAILED'].includes(t.status) && !t.label.startsWith('ref'));
        await Promise.all(
          open.map(async (t) => {
            const sent = performance.now();
            const res = await account.api.get(`/payment_intents/${t.id}`);
            const at = performance.now();
            if (res.status !== 200) return;
            const status = res.body.status as string;
            if (status === t.status) t.lastSeen.set(status, at);
            else if (!t.firstSeen.has(status)) {
              t.firstSeen.set(status, at);
              t.lastSeen.set(status, at);
              // The previous status was still stored when this request was sent, at the latest.
              t.status = status;
            }
            void sent;
          }),
        );
        await sleep(POLL_MS);
      }
    })();

    const batch = async (label: string, n: number) => {
      const made = await Promise.all(Array.from({ length: n }, (_, i) => create(account, expressBody('923000000', 15_000 + i), `${label}${i}`)));
      tracked.push(...made);
    };
    const refs: Tracked[] = [];

    // t0: payments at real time. After 1 s (before their +2 s step): back 1 h.
    const t0 = performance.now();
    const at = (ms: number) => sleep(Math.max(0, t0 + ms - performance.now()));
    await batch('a', 4);
    refs.push(await create(account, referenceBody(), 'ref-a'));
    // Before batch a's +2 s: back 1 h.
    await at(800);
    railClock.set(-HOUR);
    stepAt.back = performance.now();
    await expectClockOffset(rail, -HOUR);
    await batch('b', 4);
    // Between batch a's +2 s and +5 s, before batch b's +2 s: forward 1 h (real time again).
    await at(3_300);
    railClock.set(0);
    stepAt.forward = performance.now();
    await expectClockOffset(rail, 0);
    await batch('c', 4);
    // Before batch a's +5 s, b's +5 s and c's +2 s: forward 1 h again, an hour ahead of real time.
    await at(4_600);
    railClock.set(HOUR);
    stepAt.forward2 = performance.now();
    await expectClockOffset(rail, HOUR);
    await batch('d', 4);
    refs.push(await create(account, referenceBody(), 'ref-d'));

    // Every express payment final (5 s after the last batch, and the 2 s allowed).
    const deadline = performance.now() + 15_000;
    while (tracked.some((t) => t.status !== 'SUCCEEDED') && performance.now() < deadline) await sleep(200);
    polling = false;
    await poller;

    const report = tracked.map((t) => ({
      id: t.label,
      processing: Math.round((t.firstSeen.get('PROCESSING') ?? NaN) - t.sentAt),
      succeeded: Math.round((t.firstSeen.get('SUCCEEDED') ?? NaN) - t.sentAt),
    }));
    console.log('clock steps (ms after the create request was sent):', JSON.stringify(report), 'steps at', JSON.stringify(Object.fromEntries(Object.entries(stepAt).map(([k, v]) => [k, Math.round(v - tracked[0]!.sentAt)]))));
    const realigned = rail.output().split('\n').filter((l) => l.includes('wall clock stepped'));
    console.log('gateway realignments:', realigned.length, realigned.map((l) => l.slice(0, 300)).join('\n'));
    for (const t of tracked) {
      expect(t.status, `${t.label} (${t.id}) final status`).toBe('SUCCEEDED');
      for (const [status, dueMs] of [
        ['PROCESSING', 2_000],
        ['SUCCEEDED', 5_000],
      ] as const) {
        const seen = t.firstSeen.get(status);
        expect(seen, `${t.label}: ${status} was never observed`).toBeDefined();
        // Seen before its due time after the request was even sent: it fired early.
        expect(seen! - t.sentAt, `${t.label}: ${status} early`).toBeGreaterThanOrEqual(dueMs);
        // Seen later than due + 2 s after the answer (plus one poll period and round trip): it fired late.
        expect(seen! - t.answeredAt, `${t.label}: ${status} late`).toBeLessThanOrEqual(dueMs + LATE_MS + POLL_MS + 250);
      }
    }
    // Reference payments in flight: still PENDING (their expiry is 72 h of their own clock away).
    for (const r of refs) {
      const res = await account.api.get(`/payment_intents/${r.id}`);
      expect(res.body.status, `${r.label} after the steps`).toBe('PENDING');
    }
  }, 90_000);

  it('neither locks a key out after a step back nor gives it a second allowance after a step forward', async () => {
    await expectClockOffset(rate, 0);
    const account = await createAccount(rate.url, 'clock steps: rate limit');
    const get = async () => {
      const res = await account.api.get('/payment_intents?limit=1');
      return { status: res.status, at: performance.now(), reset: Number(res.headers.get('x-ratelimit-reset')) };
    };

    // The key's window opens with its first request; spend the allowance.
    const first = await get();
    const windowStart = first.at;
    expect(first.status).toBe(200);
    for (let i = 1; i < RATE_LIMIT; i++) expect((await get()).status).toBe(200);
    expect((await get()).status).toBe(429);

    // Back 1 h: the window's end is now an hour ahead of the wall clock. Refused until the minute is over...
    rateClock.set(-HOUR);
    await expectClockOffset(rate, -HOUR);
    const during = await get();
    expect(during.status).toBe(429);
    expect(during.reset, 'X-RateLimit-Reset after a step back').toBeLessThanOrEqual(60);
    // ...and served again once it is, in real time (not an hour later).
    await sleep(Math.max(0, windowStart + 60_000 + 1_500 - performance.now()));
    const after = await get();
    expect(after.status, 'a key at its limit before a step back is served once its minute has passed').toBe(200);

    // A new window opened with `after`: spend it, then step forward 1 h. Its end is an hour behind the
    // wall clock now; the key must still get no more than the limit within this real minute.
    const secondStart = after.at;
    const passed = [after];
    for (let i = 1; i < RATE_LIMIT; i++) passed.push(await get());
    expect(passed.every((r) => r.status === 200)).toBe(true);
    rateClock.set(0);
    await expectClockOffset(rate, 0);
    let allowed = passed.length;
    while (performance.now() < secondStart + 50_000) {
      const r = await get();
      if (r.status === 200) allowed++;
      else expect(r.reset, 'X-RateLimit-Reset after a step forward').toBeLessThanOrEqual(60);
      if (allowed > RATE_LIMIT) break;
      await sleep(2_000);
    }
    expect(allowed, 'requests let through within one real minute across a step forward').toBe(RATE_LIMIT);
  }, 150_000);
});
