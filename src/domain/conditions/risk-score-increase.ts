// risk_score_increase: the wallet's risk score rises `threshold` points or more above the
// alert's baseline (its score when the alert was created, reset by the caller to the new score
// each time the alert fires, and lowered by the caller to the score after each fall).
//
// Decisions:
// - Only a rise fires: a change that lowers the score never fires, even if the score is still
//   far above a stale baseline (say the alert was paused through the rise).
// - A null baseline (the address had no score when the alert was made) measures from the
//   score just before this change.
// - `observed` is the rise in points (score − baseline), in the threshold's unit.
import { explainScore } from "../risk/score.ts";
import { riskScoreIncreaseReason } from "../reason.ts";
import type { AlertRule, Firing, ScoreChange } from "./types.ts";

export function evaluateRiskScoreIncrease(rule: AlertRule, change: ScoreChange): Firing | null {
  if (rule.condition !== "risk_score_increase" || change.address !== rule.address) return null;
  if (!(change.score > change.previousScore)) return null;
  const baseline = rule.baselineScore ?? change.previousScore;
  const rise = change.score - baseline;
  if (!(rise >= rule.threshold)) return null;
  const factors = explainScore(change.factors).map((entry) => entry.factor);
  return {
    alertId: rule.alertId,
    dedupeKey: `score:${change.id}`,
    observed: rise,
    reason: riskScoreIncreaseReason(baseline, change.score, rule.threshold, factors),
  };
}
