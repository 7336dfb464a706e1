import { logger } from '../logger';

/** How often a counted warning writes at most one line. */
export const COUNTED_WARNING_EVERY_MS = 10_000;

/**
 * A warning about something a client can make happen thousands of times a second (a connection
 * refused, a log entry dropped): the first occurrence is logged at once, then at most one line per
 * `everyMs` saying how many happened since, so that a flood writes a line per interval, not a line
 * per occurrence. The fields of a line are those given with its interval's last occurrence.
 */
export function countedWarning(message: string, everyMs = COUNTED_WARNING_EVERY_MS): (count?: number, fields?: Record<string, unknown>) => void {
  let pending = 0;
  let pendingFields: Record<string, unknown> = {};
  let timer: NodeJS.Timeout | null = null;
  const write = () => {
    logger.warn({ ...pendingFields, count: pending }, message);
    pending = 0;
  };
  const endInterval = () => {
    timer = null;
    if (pending === 0) return;
    write();
    arm();
  };
  const arm = () => {
    timer = setTimeout(endInterval, everyMs);
    timer.unref();
  };
  return (count = 1, fields = {}) => {
    pending += count;
    pendingFields = fields;
    if (timer) return;
    write();
    arm();
  };
}
