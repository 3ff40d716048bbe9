// The benchmarks' percentiles: nearest rank, so every reported figure is a latency that was seen.
import { describe, expect, it } from "vitest";
import { percentiles } from "../../bench/lib/percentiles.ts";

describe("benchmark percentiles (nearest rank)", () => {
  it("takes the smallest sample with at least the quantile at or below it", () => {
    const hundred = Array.from({ length: 100 }, (_, i) => 100 - i); // 100 … 1, unsorted on purpose
    expect(percentiles(hundred)).toEqual({ p50: 50, p90: 90, p99: 99, max: 100 });
  });

  it("rounds the rank up between samples: p99 of 1,000 is the 990th, of 1,001 the 991st", () => {
    expect(percentiles(Array.from({ length: 1_000 }, (_, i) => i + 1)).p99).toBe(990);
    expect(percentiles(Array.from({ length: 1_001 }, (_, i) => i + 1)).p99).toBe(991);
  });

  it("answers a single sample with that sample", () => {
    expect(percentiles([7])).toEqual({ p50: 7, p90: 7, p99: 7, max: 7 });
  });

  it("reports no samples as NaN, not as a zero latency", () => {
    const none = percentiles([]);
    expect([none.p50, none.p90, none.p99, none.max].every(Number.isNaN)).toBe(true);
  });
});
