// unusual_activity's `observed`: the multiple of the baseline reached, cut down to the
// threshold's decimals (at least 2). A webhook consumer checks `observed >= threshold`; rounded
// to 2 decimals, a firing at threshold 5.004 said observed 5 and read as one that never crossed.
import { describe, expect, it } from "vitest";
import { evaluateUnusualActivity, reachesMultiple } from "../../../src/domain/conditions/index.ts";
import { observedMultiple } from "../../../src/domain/conditions/unusual-activity.ts";
import { decimalPlaces } from "../../../src/domain/decimal.ts";
import { rule, tx } from "./fixtures.ts";

const fire = (threshold: number, countAfter: number, previous7DaysCount: number) =>
  evaluateUnusualActivity(rule("unusual_activity", { threshold }), tx(), { countBefore: countAfter - 1, countAfter, previous7DaysCount });

describe("unusual_activity's observed multiple", () => {
  it("reads 5.004, not 5, for 100 transactions on 19.98/hour crossing a threshold of 5.004", () => {
    // 100 / (3,357 / 168) = 5.0044…: the exact check fires, and the payload must agree.
    const firing = fire(5.004, 100, 3_357);
    expect(firing?.observed).toBe(5.004);
    expect(firing!.observed).toBeGreaterThanOrEqual(5.004);
    // The sentence rounds the multiple and its threshold alike: it never reads one below the other.
    expect(firing?.reason).toBe("100 transactions in the last hour, 5× the usual 19.98 per hour (threshold 5×).");
  });

  it.each([
    // 1 on a baseline of 3/hour is 0.333333333…× (9 decimals: 2 would read 0.33).
    { case: "at a 9-decimal threshold", threshold: 0.333333333, count: 1, previous7DaysCount: 504, observed: 0.333333333 },
    { case: "just below a 9-decimal threshold", threshold: 0.333333334, count: 1, previous7DaysCount: 504, observed: null },
    { case: "just above a 9-decimal threshold", threshold: 0.333333332, count: 1, previous7DaysCount: 504, observed: 0.333333333 },
    // 11 on 10/hour is exactly 1.1×.
    { case: "at a threshold it meets exactly", threshold: 1.1, count: 11, previous7DaysCount: 1_680, observed: 1.1 },
    { case: "just below a threshold it would meet exactly", threshold: 1.100000001, count: 11, previous7DaysCount: 1_680, observed: null },
    { case: "just above a threshold", threshold: 1.099999999, count: 11, previous7DaysCount: 1_680, observed: 1.1 },
  ])("$case ($threshold): observed $observed", ({ threshold, count, previous7DaysCount, observed }) => {
    const firing = fire(threshold, count, previous7DaysCount);
    expect(firing === null ? null : firing.observed).toBe(observed);
  });

  it("cuts the multiple down, never up: 4 on 1.5/hour (2.666…×) reads 2.66", () => {
    expect(observedMultiple(4, 2.5, 252)).toBe(2.66);
  });

  it("keeps 2 decimals for a threshold of fewer (5 → 6.66 for 6.666…×)", () => {
    expect(observedMultiple(20, 5, 504)).toBe(6.66);
  });

  it("is never below the threshold crossed, never above the multiple reached, with the threshold's decimals", () => {
    // Random thresholds of 0 to 9 decimals, at the first count that reaches them.
    for (let trial = 0; trial < 5_000; trial++) {
      const decimals = trial % 10;
      const scale = 10 ** decimals;
      const threshold = Math.max(1, Math.floor(Math.random() * 20 * scale)) / scale;
      const previous7DaysCount = Math.floor(Math.random() * 20_000);
      let count = 1;
      while (!reachesMultiple(count, threshold, previous7DaysCount)) count += 1;
      const observed = observedMultiple(count, threshold, previous7DaysCount);
      const reached = (count * 168) / Math.max(168, previous7DaysCount);
      const places = Math.max(2, decimalPlaces(threshold)); // 1.200 has 1 decimal place
      expect(observed).toBeGreaterThanOrEqual(threshold);
      expect(observed).toBeLessThanOrEqual(reached);
      expect(decimalPlaces(observed)).toBeLessThanOrEqual(places);
      // Cut to the last of those places, no further: within one unit of it of the multiple reached.
      expect(reached - observed).toBeLessThan(1 / 10 ** places);
    }
  });
});
