import { describe, expect, it } from "vitest";
import { FACTOR_WEIGHTS, explainScore, riskScore } from "../../../src/domain/risk/index.ts";
import { RISK_FACTORS, type RiskFactor } from "../../../src/domain/types.ts";

describe("FACTOR_WEIGHTS", () => {
  it.each(RISK_FACTORS.map((factor) => ({ factor })))("gives $factor a weight strictly between 0 and 1", ({ factor }) => {
    const weight = FACTOR_WEIGHTS[factor];
    expect(weight).toBeGreaterThan(0);
    expect(weight).toBeLessThan(1);
  });

  it("ranks a sanctions hit above a mixer, a mixer above a scam, a scam above a flag", () => {
    const w = FACTOR_WEIGHTS;
    expect(w.sanctioned_counterparty).toBeGreaterThan(w.mixer_interaction);
    expect(w.mixer_interaction).toBeGreaterThan(w.scam_interaction);
    expect(w.scam_interaction).toBeGreaterThan(w.flagged_counterparty);
  });
});

describe("riskScore", () => {
  it("is 0 without factors", () => {
    expect(riskScore([])).toBe(0);
  });

  it.each(RISK_FACTORS.map((factor) => ({ factor, score: Math.round(100 * FACTOR_WEIGHTS[factor]) })))(
    "is round(100 × weight) = $score for $factor alone",
    ({ factor, score }) => {
      expect(riskScore([factor])).toBe(score);
    },
  );

  it.each<{ factors: RiskFactor[]; score: number; why: string }>([
    { factors: ["sanctioned_counterparty"], score: 90, why: "0.9 alone" },
    { factors: ["mixer_interaction", "scam_interaction"], score: 80, why: "1 − 0.4 × 0.5 = 0.8" },
    { factors: ["flagged_counterparty", "large_outflow"], score: 44, why: "1 − 0.7 × 0.8 = 0.44" },
    { factors: ["high_velocity", "failed_tx_ratio"], score: 24, why: "1 − 0.85 × 0.9 = 0.235, half rounds up" },
    { factors: ["scam_interaction", "high_velocity"], score: 58, why: "1 − 0.5 × 0.85 = 0.575, not the float's 57.4999…" },
    { factors: ["sanctioned_counterparty", "mixer_interaction"], score: 96, why: "1 − 0.1 × 0.4 = 0.96" },
    { factors: ["high_velocity", "new_counterparty_burst", "dormant_reactivation"], score: 39, why: "1 − 0.85³ = 0.385875" },
  ])("combines $factors into $score ($why)", ({ factors, score }) => {
    expect(riskScore(factors)).toBe(score);
  });

  it("is the same in any order and counts a repeated factor once", () => {
    expect(riskScore(["large_outflow", "mixer_interaction"])).toBe(riskScore(["mixer_interaction", "large_outflow"]));
    expect(riskScore(["mixer_interaction", "mixer_interaction"])).toBe(60);
  });

  it("stays an integer of at most 100 with every factor active", () => {
    const score = riskScore(RISK_FACTORS);
    expect(Number.isInteger(score)).toBe(true);
    expect(score).toBe(99);
    expect(score).toBeLessThanOrEqual(100);
  });

  it("never lowers the score when a factor is added", () => {
    let previous = 0;
    for (let i = 1; i <= RISK_FACTORS.length; i++) {
      const score = riskScore(RISK_FACTORS.slice(0, i));
      expect(score).toBeGreaterThanOrEqual(previous);
      previous = score;
    }
  });
});

describe("explainScore", () => {
  it("lists the distinct factors with their weights, heaviest first, ties in factor order", () => {
    expect(
      explainScore(["dormant_reactivation", "high_velocity", "sanctioned_counterparty", "failed_tx_ratio", "high_velocity"]),
    ).toEqual([
      { factor: "sanctioned_counterparty", weight: 0.9 },
      { factor: "high_velocity", weight: 0.15 },
      { factor: "dormant_reactivation", weight: 0.15 },
      { factor: "failed_tx_ratio", weight: 0.1 },
    ]);
  });

  it("is empty without factors", () => {
    expect(explainScore([])).toEqual([]);
  });
});
