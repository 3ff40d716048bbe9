import { describe, expect, it } from "vitest";
import { baselinePerHour, evaluateUnusualActivity, reachesMultiple } from "../../../src/domain/conditions/index.ts";
import { OTHER, SIGNATURE, THIRD, WALLET, rule, tx } from "./fixtures.ts";

describe("baselinePerHour", () => {
  it.each([
    { previous7DaysCount: 0, baseline: 1, case: "a new wallet is floored at 1 per hour" },
    { previous7DaysCount: 84, baseline: 1, case: "half a transaction an hour is floored at 1" },
    { previous7DaysCount: 168, baseline: 1, case: "one an hour" },
    { previous7DaysCount: 336, baseline: 2, case: "two an hour" },
    { previous7DaysCount: 1680, baseline: 10, case: "ten an hour" },
    { previous7DaysCount: 252, baseline: 1.5, case: "a fractional mean is kept" },
  ])("$case ($previous7DaysCount in 7 days → $baseline)", ({ previous7DaysCount, baseline }) => {
    expect(baselinePerHour(previous7DaysCount)).toBe(baseline);
  });
});

// Decimal thresholds whose limit on the baseline is a whole number of transactions: in floating
// point threshold × 7-day count lands just above count × 168 (1.1 × 1,680 = 1,848.0000000000002),
// so the exact limit was missed and the alert fired one transaction late.
describe("reachesMultiple with a decimal threshold", () => {
  const edges = [
    { threshold: 1.1, perHour: 10, limit: 11 },
    { threshold: 2.2, perHour: 5, limit: 11 },
    { threshold: 4.4, perHour: 10, limit: 44 },
    { threshold: 8.3, perHour: 10, limit: 83 },
    { threshold: 0.55, perHour: 20, limit: 11 },
    // count × 168 × 1e9 passes 2^53 here: the comparison must stay exact beyond it.
    { threshold: 1.1, perHour: 1_000_000, limit: 1_100_000 },
  ];
  it.each(
    edges.flatMap(({ threshold, perHour, limit }) => [
      { threshold, perHour, limit, count: limit - 1, reaches: false, case: "just below the limit" },
      { threshold, perHour, limit, count: limit, reaches: true, case: "at the limit" },
      { threshold, perHour, limit, count: limit + 1, reaches: true, case: "just above the limit" },
    ]),
  )("$threshold × $perHour/hour (limit $limit): $count is $case → $reaches", ({ threshold, perHour, count, reaches }) => {
    expect(reachesMultiple(count, threshold, perHour * 168)).toBe(reaches);
  });
});

describe("unusual_activity", () => {
  // Threshold 5 on a baseline of 10/hour: the limit is 50 transactions in the trailing hour.
  it.each([
    { countBefore: 48, countAfter: 49, fires: false, case: "just below the limit" },
    { countBefore: 49, countAfter: 50, fires: true, case: "reaching exactly the limit" },
    { countBefore: 49, countAfter: 51, fires: true, case: "jumping over the limit" },
    { countBefore: 50, countAfter: 51, fires: false, case: "already at the limit (edge-triggered)" },
    { countBefore: 60, countAfter: 61, fires: false, case: "already above the limit (edge-triggered)" },
  ])("$case ($countBefore → $countAfter, limit 50) fires: $fires", ({ countBefore, countAfter, fires }) => {
    const firing = evaluateUnusualActivity(rule("unusual_activity"), tx(), {
      countBefore,
      countAfter,
      previous7DaysCount: 1680,
    });
    expect(firing !== null).toBe(fires);
  });

  it.each([
    { previous7DaysCount: 0, countAfter: 5, fires: true, case: "a new wallet fires at 5 (floor 1/hour)" },
    { previous7DaysCount: 0, countAfter: 4, fires: false, case: "a new wallet does not fire at 4" },
    { previous7DaysCount: 168, countAfter: 5, fires: true, case: "one an hour fires at 5" },
    { previous7DaysCount: 1680, countAfter: 5, fires: false, case: "ten an hour does not fire at 5" },
  ])("uses the floored baseline: $case", ({ previous7DaysCount, countAfter, fires }) => {
    const firing = evaluateUnusualActivity(rule("unusual_activity"), tx(), {
      countBefore: countAfter - 1,
      countAfter,
      previous7DaysCount,
    });
    expect(firing !== null).toBe(fires);
  });

  it("fires with the signature as dedupe key and the multiple of the baseline observed", () => {
    expect(
      evaluateUnusualActivity(rule("unusual_activity"), tx(), { countBefore: 49, countAfter: 50, previous7DaysCount: 1680 }),
    ).toEqual({
      alertId: "alr_unusual_activity",
      dedupeKey: SIGNATURE,
      observed: 5,
      reason: "50 transactions in the last hour, 5× the usual 10 per hour (threshold 5×).",
      transactionSignature: SIGNATURE,
      facts: { activity: { count: 50, baselinePerHour: 10 } },
    });
  });

  it("handles a fractional baseline and threshold at the exact edge", () => {
    // Baseline 1.5/hour × 2.5 = a limit of 3.75: 3 does not reach it, 4 does.
    const at = (countBefore: number, countAfter: number) =>
      evaluateUnusualActivity(rule("unusual_activity", { threshold: 2.5 }), tx(), {
        countBefore,
        countAfter,
        previous7DaysCount: 252,
      });
    expect(at(2, 3)).toBeNull();
    // 4 / 1.5 = 2.666…: cut down to 2.66, never rounded up to a multiple that was not reached.
    expect(at(3, 4)?.observed).toBe(2.66);
    expect(at(3, 4)?.reason).toBe("4 transactions in the last hour, 2.66× the usual 1.5 per hour (threshold 2.5×).");
  });

  // Threshold 1.1 on a baseline of 10/hour: the limit is exactly 11 transactions.
  it.each([
    { countBefore: 9, countAfter: 10, fires: false, case: "just below the limit" },
    { countBefore: 10, countAfter: 11, fires: true, case: "reaching exactly the limit" },
    { countBefore: 11, countAfter: 12, fires: false, case: "already at the limit (edge-triggered)" },
  ])("with a decimal threshold: $case ($countBefore → $countAfter, limit 11) fires: $fires", ({ countBefore, countAfter, fires }) => {
    const firing = evaluateUnusualActivity(rule("unusual_activity", { threshold: 1.1 }), tx(), {
      countBefore,
      countAfter,
      previous7DaysCount: 1680,
    });
    expect(firing !== null).toBe(fires);
  });

  it("fires at the exact limit of a decimal threshold with the multiple observed", () => {
    const firing = evaluateUnusualActivity(rule("unusual_activity", { threshold: 1.1 }), tx(), {
      countBefore: 10,
      countAfter: 11,
      previous7DaysCount: 1680,
    });
    expect(firing?.observed).toBe(1.1);
    expect(firing?.reason).toBe("11 transactions in the last hour, 1.1× the usual 10 per hour (threshold 1.1×).");
  });

  it.each([
    { status: "failed", from: WALLET, to: OTHER, case: "a failed transaction" },
    { status: "success", from: WALLET, to: WALLET, case: "a self-transfer" },
    { status: "success", from: OTHER, to: WALLET, case: "an incoming transaction" },
  ] as const)("counts $case as activity", ({ status, from, to }) => {
    const firing = evaluateUnusualActivity(rule("unusual_activity"), tx({ status, from, to }), {
      countBefore: 4,
      countAfter: 5,
      previous7DaysCount: 0,
    });
    expect(firing).not.toBeNull();
  });

  it("does not fire for a transaction the wallet is not part of", () => {
    const firing = evaluateUnusualActivity(rule("unusual_activity"), tx({ from: OTHER, to: THIRD }), {
      countBefore: 4,
      countAfter: 5,
      previous7DaysCount: 0,
    });
    expect(firing).toBeNull();
  });

  it("never fires with a threshold of zero, whose limit no count can cross", () => {
    const firing = evaluateUnusualActivity(rule("unusual_activity", { threshold: 0 }), tx(), {
      countBefore: 0,
      countAfter: 1,
      previous7DaysCount: 0,
    });
    expect(firing).toBeNull();
  });

  it("does not fire for a rule of another condition", () => {
    const window = { countBefore: 4, countAfter: 5, previous7DaysCount: 0 };
    expect(evaluateUnusualActivity(rule("suspicious_counterparty", { threshold: 5 }), tx(), window)).toBeNull();
  });
});

// The limit moves at each hour boundary: threshold 5 on 672 transactions in the 7 days before
// hour h (4 an hour) is a limit of 20; on none before hour h+1 (the busy hour has left them), 5.
// The verdict before a transaction's is the one at the wallet's transaction before it, against
// the limit of that one's own hour (window.previous).
describe("unusual_activity with the verdict before it judged against its own hour's limit", () => {
  it.each([
    { countBefore: 10, countAfter: 11, now: 0, previous: { count: 10, previous7DaysCount: 672 }, fires: true, case: "10 under 20 at h:59, then 11 over 5 at h+1:00 (the limit fell under the burst)" },
    { countBefore: 11, countAfter: 12, now: 0, previous: { count: 11, previous7DaysCount: 0 }, fires: false, case: "11 over 5, then 12 over 5 (the burst is reported)" },
    { countBefore: 10, countAfter: 11, now: 0, previous: undefined, fires: false, case: "no verdict before it known: this hour's limit alone, as before" },
    { countBefore: 3, countAfter: 4, now: 0, previous: { count: 3, previous7DaysCount: 672 }, fires: false, case: "below the lower limit still" },
    { countBefore: 4, countAfter: 5, now: 0, previous: { count: 6, previous7DaysCount: 0 }, fires: true, case: "the count fell below the limit at this minute since the verdict before (a crossing, as before)" },
    { countBefore: 6, countAfter: 7, now: 672, previous: { count: 6, previous7DaysCount: 0 }, fires: false, case: "over 5, then under a limit that rose to 20" },
    { countBefore: 19, countAfter: 20, now: 672, previous: { count: 19, previous7DaysCount: 0 }, fires: true, case: "reaching a limit that rose to 20, which the count was below (a crossing of this hour's limit)" },
  ])("$case: fires $fires", ({ countBefore, countAfter, now, previous, fires }) => {
    const window = { countBefore, countAfter, previous7DaysCount: now, ...(previous ? { previous } : {}) };
    const firing = evaluateUnusualActivity(rule("unusual_activity"), tx(), window);
    expect(firing !== null).toBe(fires);
    if (firing) expect(firing.facts).toEqual({ activity: { count: countAfter, baselinePerHour: now === 0 ? 1 : 4 } });
  });

  it("fires nothing on a late transaction while the newest minute's hour is over the limit it was judged by", () => {
    const window = { countBefore: 4, countAfter: 5, previous7DaysCount: 0, newestBefore: { count: 10, previous7DaysCount: 0 } };
    expect(evaluateUnusualActivity(rule("unusual_activity"), tx(), window)).toBeNull();
    // Under the higher limit of that minute's own hour (20), the late crossing at its own minute fires.
    expect(evaluateUnusualActivity(rule("unusual_activity"), tx(), { ...window, newestBefore: { count: 10, previous7DaysCount: 672 } })).not.toBeNull();
  });

  it("names the end of the hour judged when it is not the transaction's own minute", () => {
    // The transaction at 07:06 UTC, the hour judged to 07:13 (the wallet's newest minute), evaluated an hour later.
    const window = { countBefore: 4, countAfter: 5, previous7DaysCount: 0, hourTo: tx().blockTime + 7 * 60, evaluatedAt: tx().blockTime + 3_600 };
    expect(new Date(tx().blockTime * 1000).toISOString().slice(11, 16)).toBe("07:06");
    expect(evaluateUnusualActivity(rule("unusual_activity"), tx(), window)?.reason).toBe(
      "5 transactions in the hour to 07:13 UTC, 5× the floor of 1 per hour (no earlier activity, threshold 5×).",
    );
  });
});
