import type { PgwClient } from '@pgw/client';
import { apiClient } from '../api';
import { resolveConnection, type ConnectionFlags } from '../connection';
import { parseDuration } from '../duration';
import { createOutput } from '../output';
import { printable } from '../printable';

export async function advanceClock(api: PgwClient, seconds: number) {
  const { data } = await api.POST('/sandbox/clock/advance', { body: { seconds } });
  return data;
}

/** `pgw clock advance <duration>`: every timer due in the span fires before the answer (contract decisions). */
export async function clockAdvance(duration: string, opts: ConnectionFlags & { json?: boolean }): Promise<void> {
  const seconds = parseDuration(duration);
  const conn = resolveConnection(opts);
  const out = createOutput(opts);
  out.progress(`advancing the sandbox clock ${seconds} s`);
  const clock = await advanceClock(apiClient(conn), seconds);
  if (out.json) return out.object(clock);
  out.line(`sandbox clock advanced ${seconds} s: now ${printable(clock.now)} (offset ${printable(clock.offset_seconds)} s)`);
}

/**
 * `pgw clock` (or `pgw clock show`): the account's sandbox clock, GET /sandbox/clock: its time, and how
 * far ahead of real time it is (every `pgw trigger` and `clock advance` moves it; `pgw reset` sets it back).
 */
export async function clockShow(opts: ConnectionFlags & { json?: boolean }): Promise<void> {
  const conn = resolveConnection(opts);
  const out = createOutput(opts);
  const { data: clock } = await apiClient(conn).GET('/sandbox/clock');
  if (out.json) return out.object(clock);
  const ahead = clock.offset_seconds === 0 ? 'real time' : `${formatSpan(clock.offset_seconds)} ahead of real time`;
  out.line(`sandbox clock: ${printable(clock.now)} (${ahead}; offset ${printable(clock.offset_seconds)} s)`);
}

/** 93784 → `1d 2h 3m 4s`. */
export function formatSpan(seconds: number): string {
  const parts: string[] = [];
  let rest = seconds;
  for (const [unit, size] of [['d', 86_400], ['h', 3600], ['m', 60], ['s', 1]] as const) {
    const n = Math.floor(rest / size);
    rest -= n * size;
    if (n > 0) parts.push(`${n}${unit}`);
  }
  return parts.join(' ') || '0s';
}
