import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';

/**
 * The wall clock, the monotonic clock, and the steps between them. Waits and intervals use `monotonicMs()`,
 * which never steps; stored wall times are judged through the machine's base (wall − monotonic), the same in
 * every process of a machine, which a step of the wall clock moves by the step and nothing else. More:
 * docs/decisions/notes/timers-and-clock.md, "The machine clock".
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

/* eslint-disable no-restricted-syntax -- the machine's wall clock: one base and step count for the process */
let base = readBase();
let steps = 0;
/* eslint-enable no-restricted-syntax */

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
