/**
 * Webhook lag percentiles computed by the database: each lag goes into a logarithmic bin (BINS_PER_DECADE
 * bins per power of ten, so a bin spans about 12 % of its values) and the database returns, per bin, how
 * many lags fell in it and the largest of them. A percentile is then read off the cumulative counts
 * (nearest rank) as the largest lag of the bin that holds it: always a lag that was observed, at or above
 * the exact percentile by at most the width of one bin. Only `$add $log10 $multiply $floor`, which both
 * the embedded engine and MongoDB have.
 */
export const BINS_PER_DECADE = 20;

/** The aggregation expression of the bin of `lagMs` (a number of ms, 0 or more). */
export function lagBinExpression(lagMs: unknown): Record<string, unknown> {
  return { $floor: { $multiply: [{ $log10: { $add: [lagMs, 1] } }, BINS_PER_DECADE] } };
}

/** The same bin computed here, for a lag counted as it happens (rollupWrites.ts). */
export function lagBin(lagMs: number): number {
  return Math.floor(Math.log10(lagMs + 1) * BINS_PER_DECADE);
}

export interface LagBin {
  bin: number;
  count: number;
  /** The largest lag of the bin, ms. */
  max: number;
}

/** The `p`-th percentile (0 < p ≤ 1) of the lags the bins hold; null when they hold none. */
export function percentileOf(bins: readonly LagBin[], p: number): number | null {
  const total = bins.reduce((sum, b) => sum + b.count, 0);
  if (total === 0) return null;
  const rank = Math.max(1, Math.ceil(p * total));
  let seen = 0;
  for (const b of [...bins].sort((x, y) => x.bin - y.bin)) {
    seen += b.count;
    if (seen >= rank) return Math.round(b.max);
  }
  return null;
}

/** Bins of the same number added together (one histogram from several buckets'). */
export function mergeBins(bins: readonly LagBin[]): LagBin[] {
  const byBin = new Map<number, LagBin>();
  for (const b of bins) {
    const seen = byBin.get(b.bin);
    if (seen) {
      seen.count += b.count;
      seen.max = Math.max(seen.max, b.max);
    } else byBin.set(b.bin, { ...b });
  }
  return [...byBin.values()];
}
