import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { logger } from '../../src/logger';
import { countedWarning } from '../../src/platform/countedWarning';

/**
 * src/platform/countedWarning.ts: a flood of occurrences writes the first at once, then one line per
 * interval with the count since; a quiet interval writes nothing, and the next occurrence is logged at once.
 */
let lines: Array<{ fields: Record<string, unknown>; message: string }>;

beforeEach(() => {
  vi.useFakeTimers();
  lines = [];
  vi.spyOn(logger, 'warn').mockImplementation(((fields: Record<string, unknown>, message: string) => void lines.push({ fields, message })) as never);
});

afterEach(() => {
  vi.restoreAllMocks();
  vi.useRealTimers();
});

it('writes one line per interval whatever the number of occurrences, with their count', () => {
  const warn = countedWarning('things dropped', 1_000);
  for (let i = 0; i < 10_000; i++) warn(1, { bound: 5 });
  expect(lines).toEqual([{ fields: { bound: 5, count: 1 }, message: 'things dropped' }]);

  vi.advanceTimersByTime(1_000);
  expect(lines.map((l) => l.fields.count)).toEqual([1, 9_999]);

  warn(3);
  vi.advanceTimersByTime(1_000);
  expect(lines.map((l) => l.fields.count)).toEqual([1, 9_999, 3]);

  // A quiet interval ends the series; the next occurrence is written at once.
  vi.advanceTimersByTime(5_000);
  expect(lines).toHaveLength(3);
  warn(2);
  expect(lines.map((l) => l.fields.count)).toEqual([1, 9_999, 3, 2]);
});
