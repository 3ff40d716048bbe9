// The risk score: a transparent, deterministic 0–100 from named factors (DESIGN.md section 5).
// Each active factor i has a weight wᵢ in (0, 1), read as "the chance this factor alone means
// the address is bad", and the factors combine like independent chances:
//   score = round(100 × (1 − Π(1 − wᵢ)))
// so one factor gives round(100 w), more factors only ever raise the score, and it never
// passes 100. The same set of factors always gives the same score, in any order.
import { RISK_FACTORS, type RiskFactor } from "../types.ts";

/**
 * Why these weights:
 * - sanctioned_counterparty 0.9: dealing with a sanctioned (e.g. OFAC-listed) address is a legal
 *   problem by itself; alone it scores 90, the top band, whatever else the address does.
 * - mixer_interaction 0.6: mixers are the usual laundering step, but privacy use exists; alone
 *   it scores 60, above the default suspicious_counterparty threshold only with company.
 * - scam_interaction 0.5 (scam, hack, darknet): criminal proceeds nearby, yet victims who paid
 *   a scam carry the same link, so it stops at half.
 * - flagged_counterparty 0.3: a vendor's weaker verdict (gambling, or any other category scored
 *   ≥ 50); a hint, not a finding.
 * - the behavioural factors, 0.1–0.2: busy traders and bots do these things every day, so
 *   alone they stay low (10–20); together, or beside a label factor, they push the score up.
 *   large_outflow is the highest of them (0.2) because draining a wallet is how a compromised
 *   key looks; failed_tx_ratio the lowest (0.1) because congestion and bots fail a lot.
 */
export const FACTOR_WEIGHTS: Readonly<Record<RiskFactor, number>> = Object.freeze({
  sanctioned_counterparty: 0.9,
  flagged_counterparty: 0.3,
  mixer_interaction: 0.6,
  scam_interaction: 0.5,
  high_velocity: 0.15,
  large_outflow: 0.2,
  failed_tx_ratio: 0.1,
  new_counterparty_burst: 0.15,
  dormant_reactivation: 0.15,
});

/** The distinct factors, in RISK_FACTORS order. */
function distinct(factors: readonly RiskFactor[]): RiskFactor[] {
  const present = new Set(factors);
  return RISK_FACTORS.filter((factor) => present.has(factor));
}

/** round(100 × (1 − Π(1 − wᵢ))) over the distinct factors: an integer 0–100; no factors → 0. */
export function riskScore(factors: readonly RiskFactor[]): number {
  let clean = 1;
  for (const factor of distinct(factors)) clean *= 1 - FACTOR_WEIGHTS[factor];
  // Round to 9 decimals first: binary floating point turns an exact x.5 (57.5 for weights 0.5
  // and 0.15) into 57.49999999999999, and the half must round up as it does on paper.
  const exact = Number((100 * (1 - clean)).toFixed(9));
  return Math.min(100, Math.max(0, Math.round(exact)));
}

/** The distinct factors with their weights, the heaviest first (ties in RISK_FACTORS order). */
export function explainScore(factors: readonly RiskFactor[]): Array<{ factor: RiskFactor; weight: number }> {
  return distinct(factors)
    .map((factor) => ({ factor, weight: FACTOR_WEIGHTS[factor] }))
    .sort((a, b) => b.weight - a.weight);
}
