import { UsageError } from './errors';

/** The span POST /sandbox/clock/advance accepts (contract decisions, "Sandbox clock"). */
export const MAX_ADVANCE_SECONDS = 31_536_000;

const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 };

/** `90s`, `30m`, `72h`, `2d`, combinations such as `1h30m`, or plain seconds (`45`), to seconds. */
export function parseDuration(text: string): number {
  const trimmed = text.trim().toLowerCase();
  let seconds = 0;
  if (/^\d+$/.test(trimmed)) {
    seconds = Number(trimmed);
  } else if (/^(\d+[smhd])+$/.test(trimmed)) {
    for (const [, n, unit] of trimmed.matchAll(/(\d+)([smhd])/g)) seconds += Number(n) * UNIT_SECONDS[unit!]!;
  } else {
    throw new UsageError(`duration must look like 90s, 30m, 72h, 2d or 1h30m, got '${text}'`);
  }
  if (seconds < 1 || seconds > MAX_ADVANCE_SECONDS) {
    throw new UsageError(`duration must be between 1 s and ${MAX_ADVANCE_SECONDS} s (365 d), got '${text}' (${seconds} s)`);
  }
  return seconds;
}
