import { describe, expect, it } from "vitest";
import { RISK_RULES, labelFactor, riskFactors, type RiskInputs } from "../../../src/domain/risk/index.ts";
import type { LabelCategory, RiskFactor } from "../../../src/domain/types.ts";

/** A quiet, unremarkable address: no factor is active. */
function inputs(overrides: Partial<RiskInputs> = {}): RiskInputs {
  return {
    counterpartyLabels: [],
    transactionsLastHour: 1,
    previous7DaysCount: 168,
    transactions24h: 24,
    failed24h: 0,
    solOutflow24h: 1,
    balanceSol: 50,
    newCounterpartiesLastHour: 0,
    secondsSincePreviousSend: 3_600,
    ...overrides,
  };
}

describe("labelFactor", () => {
  it.each<{ category: LabelCategory; score: number; factor: RiskFactor | null }>([
    { category: "sanctioned", score: 100, factor: "sanctioned_counterparty" },
    { category: "sanctioned", score: 0, factor: "sanctioned_counterparty" },
    { category: "mixer", score: 80, factor: "mixer_interaction" },
    { category: "mixer", score: 10, factor: "mixer_interaction" },
    { category: "scam", score: 90, factor: "scam_interaction" },
    { category: "hack", score: 90, factor: "scam_interaction" },
    { category: "darknet", score: 20, factor: "scam_interaction" },
    { category: "gambling", score: 50, factor: "flagged_counterparty" },
    { category: "gambling", score: 49, factor: null },
    { category: "flagged", score: 50, factor: "flagged_counterparty" },
    { category: "flagged", score: 49.9, factor: null },
    { category: "exchange", score: 51, factor: "flagged_counterparty" },
    { category: "exchange", score: 0, factor: null },
    { category: "defi", score: 100, factor: "flagged_counterparty" },
    { category: "defi", score: 49, factor: null },
  ])("$category scored $score → $factor", ({ category, score, factor }) => {
    expect(labelFactor(category, score)).toBe(factor);
  });
});

describe("riskFactors", () => {
  it("finds nothing for a quiet address", () => {
    expect(riskFactors(inputs())).toEqual([]);
  });

  it("maps counterparty labels, distinct and in RISK_FACTORS order", () => {
    const labels = [
      { category: "darknet", score: 70 },
      { category: "sanctioned", score: 100 },
      { category: "scam", score: 60 },
      { category: "exchange", score: 10 },
      { category: "gambling", score: 65 },
    ] as const;
    expect(riskFactors(inputs({ counterpartyLabels: labels }))).toEqual([
      "sanctioned_counterparty",
      "flagged_counterparty",
      "scam_interaction",
    ]);
  });

  // Each behavioural factor at its cut-off (active) and just below it (not).
  it.each<{ factor: RiskFactor; at: Partial<RiskInputs>; below: Partial<RiskInputs>; case: string }>([
    {
      factor: "high_velocity",
      case: "10 × a floored baseline of 1 is below the minimum of 20, so 20 decides",
      at: { transactionsLastHour: 20, previous7DaysCount: 0 },
      below: { transactionsLastHour: 19, previous7DaysCount: 0 },
    },
    {
      factor: "high_velocity",
      case: "10 × a baseline of 3/hour = 30",
      at: { transactionsLastHour: 30, previous7DaysCount: 504 },
      below: { transactionsLastHour: 29, previous7DaysCount: 504 },
    },
    {
      factor: "failed_tx_ratio",
      case: "30 % failed over 10 transactions",
      at: { transactions24h: 10, failed24h: 3 },
      below: { transactions24h: 10, failed24h: 2 },
    },
    {
      factor: "failed_tx_ratio",
      case: "too few transactions to call it a ratio",
      at: { transactions24h: 10, failed24h: 10 },
      below: { transactions24h: 9, failed24h: 9 },
    },
    {
      factor: "large_outflow",
      case: "the 100 SOL floor on a small balance",
      at: { solOutflow24h: 100, balanceSol: 5 },
      below: { solOutflow24h: 99.99, balanceSol: 0 },
    },
    {
      factor: "large_outflow",
      case: "half of the snapshot's balance on a large balance",
      at: { solOutflow24h: 1_000, balanceSol: 2_000 },
      below: { solOutflow24h: 1_000, balanceSol: 2_000.01 },
    },
    {
      factor: "new_counterparty_burst",
      case: "10 new counterparties in an hour",
      at: { newCounterpartiesLastHour: 10 },
      below: { newCounterpartiesLastHour: 9 },
    },
    {
      factor: "dormant_reactivation",
      case: "a gap of 90 days",
      at: { secondsSincePreviousSend: 90 * 86_400 },
      below: { secondsSincePreviousSend: 90 * 86_400 - 1 },
    },
  ])("$factor: $case", ({ factor, at, below }) => {
    expect(riskFactors(inputs(at))).toEqual([factor]);
    expect(riskFactors(inputs(below))).toEqual([]);
  });

  // The outflow is a sum of lamport-exact amounts, and a sum in doubles drifts off it: nine sends
  // of 10.1 SOL and one of 9.1 sum to 99.99999999999999, ten of 120.3 to 1202.9999999999998.
  // The cut-offs are compared to the lamport, so the drift neither hides nor makes a crossing.
  it.each([
    { case: "100 SOL summed in doubles (99.99999999999999)", outflow: 99.99999999999999, balance: 0, active: true },
    { case: "exactly 100 SOL", outflow: 100, balance: 0, active: true },
    { case: "one lamport below 100 SOL", outflow: 99.999999999, balance: 0, active: false },
    { case: "one lamport above 100 SOL", outflow: 100.000000001, balance: 0, active: true },
    { case: "an outflow of half the balance, summed in doubles", outflow: 1_202.9999999999998, balance: 2_406, active: true },
    { case: "a balance one lamport above twice the outflow", outflow: 1_202.9999999999998, balance: 2_406.000000001, active: false },
    { case: "a balance one lamport below twice the outflow", outflow: 1_202.9999999999998, balance: 2_405.999999999, active: true },
    // Past 2^53 in lamports once multiplied (BigInt), still below 2^22 SOL per amount (lamports.ts).
    { case: "a large balance, twice the outflow to the lamport", outflow: 1_999_999.999999999, balance: 3_999_999.999999998, active: true },
    { case: "a large balance, one lamport above twice the outflow", outflow: 1_999_999.999999999, balance: 3_999_999.999999999, active: false },
  ])("large_outflow to the lamport: $case → $active", ({ outflow, balance, active }) => {
    expect(riskFactors(inputs({ solOutflow24h: outflow, balanceSol: balance })).includes("large_outflow")).toBe(active);
  });

  // The balance is the latest account snapshot, and the service cannot tell whether it was taken
  // before or after the day's sends (a Helius delivery carries no balance). The outflow is judged
  // against the snapshot itself: a drain of half or more is seen either way, and a drain of a
  // third to a half is flagged too when the snapshot came after it (the accepted false alarm).
  // Until 2026-11-28 the cut-off was half of balance + outflow: a snapshot taken before the sends
  // needed all of it to leave (49,950 of 50,000 SOL raised nothing).
  it.each([
    { case: "snapshot before a drain of 99.9 % (50 sends of 999 SOL)", outflow: 49_950, balance: 50_000, active: true },
    { case: "snapshot before a drain of 60 %", outflow: 30_000, balance: 50_000, active: true },
    { case: "snapshot before a drain of exactly 50 %", outflow: 25_000, balance: 50_000, active: true },
    { case: "snapshot before a drain of 49.99 %", outflow: 24_995, balance: 50_000, active: false },
    { case: "snapshot after a drain of 99.9 % (50 SOL left)", outflow: 49_950, balance: 50, active: true },
    { case: "snapshot after a drain of 40 % (the accepted false-alarm band)", outflow: 20_000, balance: 30_000, active: true },
    { case: "snapshot after a drain of exactly a third (the band's lower edge)", outflow: 10_000, balance: 20_000, active: true },
    { case: "snapshot after a drain of 30 %", outflow: 15_000, balance: 35_000, active: false },
    { case: "no snapshot (balance 0), 100 SOL sent", outflow: 100, balance: 0, active: true },
    { case: "no snapshot (balance 0), 99.99 SOL sent", outflow: 99.99, balance: 0, active: false },
    { case: "a snapshot of 150 SOL, 99.99 SOL sent: the 100 SOL minimum still holds", outflow: 99.99, balance: 150, active: false },
  ])("large_outflow against the snapshot's balance: $case → $active", ({ outflow, balance, active }) => {
    expect(riskFactors(inputs({ solOutflow24h: outflow, balanceSol: balance })).includes("large_outflow")).toBe(active);
  });

  it("does not call the first transaction ever a reactivation", () => {
    expect(riskFactors(inputs({ secondsSincePreviousSend: null }))).toEqual([]);
  });

  it("lists every factor once, in RISK_FACTORS order, when all are active", () => {
    const all = riskFactors({
      counterpartyLabels: [
        { category: "defi", score: 60 },
        { category: "mixer", score: 90 },
        { category: "hack", score: 90 },
        { category: "sanctioned", score: 100 },
        { category: "sanctioned", score: 100 },
      ],
      transactionsLastHour: 500,
      previous7DaysCount: 168,
      transactions24h: 600,
      failed24h: 300,
      solOutflow24h: 10_000,
      balanceSol: 0.5,
      newCounterpartiesLastHour: 50,
      secondsSincePreviousSend: 365 * 86_400,
    });
    expect(all).toEqual([
      "sanctioned_counterparty",
      "flagged_counterparty",
      "mixer_interaction",
      "scam_interaction",
      "high_velocity",
      "large_outflow",
      "failed_tx_ratio",
      "new_counterparty_burst",
      "dormant_reactivation",
    ]);
  });

  it("publishes the cut-offs it applies", () => {
    expect(RISK_RULES).toEqual({
      highVelocityMultiple: 10,
      highVelocityMinimum: 20,
      failedRatioPercent: 30,
      failedRatioMinimumTransactions: 10,
      largeOutflowMinimumSol: 100,
      largeOutflowSharePercent: 50,
      newCounterpartiesPerHour: 10,
      dormantSeconds: 7_776_000,
    });
    expect(Object.isFrozen(RISK_RULES)).toBe(true);
  });
});
