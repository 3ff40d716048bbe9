import { describe, expect, it } from "vitest";
import { evaluateRiskScoreIncrease, type ScoreChange } from "../../../src/domain/conditions/index.ts";
import { OTHER, WALLET, rule } from "./fixtures.ts";

function change(overrides: Partial<ScoreChange> = {}): ScoreChange {
  return { id: 42, address: WALLET, previousScore: 20, score: 30, factors: [], ...overrides };
}

describe("risk_score_increase", () => {
  // Baseline 20, threshold 10: fires from a score of 30.
  it.each([
    { score: 29, fires: false, case: "just below" },
    { score: 30, fires: true, case: "at" },
    { score: 31, fires: true, case: "just above" },
  ])("a rise to $score is $case the threshold and fires: $fires", ({ score, fires }) => {
    const firing = evaluateRiskScoreIncrease(rule("risk_score_increase", { baselineScore: 20 }), change({ previousScore: 20, score }));
    expect(firing !== null).toBe(fires);
    if (firing) expect(firing.observed).toBe(score - 20);
  });

  it("fires with `score:<changeId>` as dedupe key, no transaction, and names the heaviest factors", () => {
    const firing = evaluateRiskScoreIncrease(
      rule("risk_score_increase", { baselineScore: 0 }),
      change({ previousScore: 0, score: 97, factors: ["high_velocity", "mixer_interaction", "sanctioned_counterparty"] }),
    );
    expect(firing).toEqual({
      alertId: "alr_risk_score_increase",
      dedupeKey: "score:42",
      observed: 97,
      reason: "Risk score rose 97 points, from 0 to 97 (threshold 10): sanctioned counterparty, mixer interaction +1 more.",
      facts: { previousScore: 0 },
    });
  });

  it("measures from the alert's baseline, not the previous score, so small steps add up", () => {
    const firing = evaluateRiskScoreIncrease(
      rule("risk_score_increase", { baselineScore: 20 }),
      change({ previousScore: 26, score: 32, factors: ["high_velocity"] }),
    );
    expect(firing?.observed).toBe(12);
    expect(firing?.reason).toBe("Risk score rose 12 points, from 20 to 32 (threshold 10): high velocity.");
    // The webhook's previousScore is that baseline, not the change's own previous score (26).
    expect(firing?.facts).toEqual({ previousScore: 20 });
  });

  it("measures from the previous score when the alert has no baseline", () => {
    const rules = rule("risk_score_increase", { baselineScore: null });
    expect(evaluateRiskScoreIncrease(rules, change({ previousScore: 25, score: 34 }))).toBeNull();
    expect(evaluateRiskScoreIncrease(rules, change({ previousScore: 25, score: 35 }))?.observed).toBe(10);
  });

  it.each([
    { previousScore: 60, score: 50, case: "a decrease, though still far above a stale baseline" },
    { previousScore: 50, score: 50, case: "an unchanged score" },
  ])("does not fire for $case", ({ previousScore, score }) => {
    const firing = evaluateRiskScoreIncrease(rule("risk_score_increase", { baselineScore: 10 }), change({ previousScore, score }));
    expect(firing).toBeNull();
  });

  it("does not fire for a change of another address", () => {
    const firing = evaluateRiskScoreIncrease(rule("risk_score_increase", { baselineScore: 0 }), change({ address: OTHER, score: 90 }));
    expect(firing).toBeNull();
  });

  it("does not fire for a rule of another condition", () => {
    const firing = evaluateRiskScoreIncrease(rule("unusual_activity", { threshold: 1, baselineScore: 0 }), change({ score: 90 }));
    expect(firing).toBeNull();
  });
});
