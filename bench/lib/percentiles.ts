// Latency percentiles as every benchmark reports them: nearest rank (the smallest value with
// at least q of the samples at or below it), so a reported p99 is a latency that was seen.

export type Percentiles = { p50: number; p90: number; p99: number; max: number };

/** p50, p90, p99 and max of `values`; NaN (null in the JSON) when there are none, never a flattering 0. */
export function percentiles(values: readonly number[]): Percentiles {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? Number.NaN;
  return { p50: at(0.5), p90: at(0.9), p99: at(0.99), max: sorted.at(-1) ?? Number.NaN };
}
