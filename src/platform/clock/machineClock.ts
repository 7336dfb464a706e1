import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';

/**
 * The wall clock and the machine's monotonic clock, and the steps between them.
 *
 * Wall time (`Date.now()`) is what the gateway stores and shows: timestamps, due times, window ends.
 * It can step: NTP corrects a clock that was off by stepping it (chrony's `makestep`, `ntpdate`), an
 * operator sets it, a VM resumes. Waiting and measuring must not follow such a step, or a timer stored
 * 5 s ahead waits an hour after a step back and fires at once after a step forward, and a rate-limit
 * window lasts an hour or no time at all. So:
 *
 * - In-process intervals (deadlines, cache ages, waits) use `monotonicMs()`, which never steps.
 * - Stored wall times are judged against the monotonic clock through the machine's **base**:
 *   `base = wall - monotonic`. The monotonic clock (CLOCK_MONOTONIC, `process.hrtime`) is one clock for
 *   every process of a machine (a kernel), and NTP's slewing moves it with the wall clock, so the base
 *   is the same number in every process of the machine and stays put; a step of the wall clock moves it
 *   by the step, and by nothing else. A wall time written when the base was `b1`, read when it is `b2`,
 *   is `wall + (b2 - b1)` in today's wall time (durable timers: timerPoller.ts; rate-limit windows:
 *   rateLimitService.ts).
 *
 * `MACHINE_CLOCK` names the monotonic clock: the kernel's boot id (Linux; a container shares its
 * host's kernel and clock), else the host name. Values of another machine's base mean nothing here.
 */

/** The machine's monotonic clock in ms (CLOCK_MONOTONIC: the same in every process of the machine). */
export function monotonicMs(): number {
  return Number(process.hrtime.bigint() / 1_000_000n);
}

export const MACHINE_CLOCK = machineClockId();

function machineClockId(): string {
  try {
    return `boot:${readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim()}`;
  } catch {
    return `host:${hostname()}`;
  }
}

/**
 * A change of the base smaller than this is reading jitter (two readings of two clocks, each to the
 * ms), not a step. Steps smaller than this are not corrected: they move a timer or a window by less.
 */
export const STEP_TOLERANCE_MS = 500;

function readBase(): number {
  return Date.now() - monotonicMs();
}

let base = readBase();
let steps = 0;

/**
 * The machine's base (`wall - monotonic`, ms) as this process knows it: read again at each call,
 * and changed only when the reading moved by more than STEP_TOLERANCE_MS (a step of the wall clock),
 * so that between steps every caller gets the same number.
 */
export function machineBase(): number {
  const now = readBase();
  if (Math.abs(now - base) > STEP_TOLERANCE_MS) {
    base = now;
    steps++;
  }
  return base;
}

/** How many wall-clock steps this process has seen (machineBase's readings); a change means "realign". */
export function wallClockSteps(): number {
  machineBase();
  return steps;
}

/** Whether two bases of this machine are the same timeline (they differ by reading jitter only). */
export function sameBase(a: number, b: number): boolean {
  return Math.abs(a - b) <= STEP_TOLERANCE_MS;
}
