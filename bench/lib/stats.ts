import type { DbCounts } from './dbCounters';

/** A measured row: throughput and latency percentiles (ms). */
export interface Measure {
  /** Operations per second over the measured period. */
  rps: number;
  p50: number;
  p99: number;
  /** Operations completed. */
  count: number;
  /** Failed operations (connection errors, timeouts, non-2xx answers). */
  errors: number;
  /** Free-form detail for the report (e.g. status codes seen). */
  note?: string;
  /** CPU ms per operation used by each watched process (gateway, db, baseline server). */
  cpuPerOp?: Record<string, number>;
  /** Database commands and documents written per operation, from its serverStatus (gateway rows). */
  dbPerOp?: DbCounts;
}

/** Percentile by nearest rank over unsorted samples (sorts a copy). */
export function percentile(samples: ArrayLike<number>, p: number): number {
  if (samples.length === 0) return NaN;
  const sorted = Float64Array.from(samples).sort();
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}

export function summarize(samples: number[], seconds: number, errors = 0): Measure {
  return {
    rps: samples.length / seconds,
    p50: percentile(samples, 50),
    p99: percentile(samples, 99),
    count: samples.length,
    errors,
  };
}

/**
 * One row measured in several slices (bench/run.ts runs compared rows in turns): throughput over the
 * slices' total time, CPU, commands and writes per operation over all their operations, the median of
 * the slices' p50 and the highest of their p99 (a conservative tail: the percentile of merged samples
 * is not known).
 */
export function mergeSlices(slices: Measure[]): Measure {
  const count = slices.reduce((n, m) => n + m.count, 0);
  const seconds = slices.reduce((t, m) => t + (m.rps > 0 ? m.count / m.rps : 0), 0);
  const p50s = slices.map((m) => m.p50).sort((a, b) => a - b);
  const perOp = (pick: (m: Measure) => object | undefined): Record<string, number> => {
    const merged: Record<string, number> = {};
    for (const m of slices) {
      for (const [k, v] of Object.entries(pick(m) ?? {}) as Array<[string, number]>) merged[k] = (merged[k] ?? 0) + (v * m.count) / Math.max(1, count);
    }
    return merged;
  };
  const cpuPerOp = perOp((m) => m.cpuPerOp);
  // Only where every slice read them: a slice without would weigh as zero.
  const dbPerOp = slices.every((m) => m.dbPerOp) ? (perOp((m) => m.dbPerOp) as unknown as DbCounts) : undefined;
  const notes = [...new Set(slices.map((m) => m.note).filter((n): n is string => Boolean(n)))];
  return {
    rps: seconds > 0 ? count / seconds : 0,
    p50: p50s[Math.floor((p50s.length - 1) / 2)] ?? NaN,
    p99: Math.max(...slices.map((m) => m.p99)),
    count,
    errors: slices.reduce((n, m) => n + m.errors, 0),
    note: notes.join('; ') || undefined,
    cpuPerOp,
    dbPerOp,
  };
}

/** Runs `fn` over `items` with at most `limit` in flight; results in input order. */
export async function pool<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const workers = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!, i);
    }
  });
  await Promise.all(workers);
  return out;
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
