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
// - A change made before the alert was created or last resumed is not the alert's
//   (judgeScoreChange): its baseline, the score then, takes that change in already. Judged
//   later (a backlog held its evaluation), a label loaded and taken back (0 → 90 → 0) paged an
//   alert created at 0 with "rose 90 points, from 0 to 90", and a change made while the alert
//   was paused fired once it was resumed ("a paused alert watches no change").
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
    facts: { previousScore: baseline },
  };
}

/** What a risk_score_increase alert holds between changes (read under its lock, then carried from change to change). */
export type ScoreAlertState = {
  baselineScore: number | null;
  /** The newest score change of the address when the alert was created or last resumed (0: every change is the alert's). */
  baselineChangeId: number;
};

/** One change judged by one alert: its firing, if any, and the baseline after it. */
export type ScoreJudgment = { firing: Firing | null; baselineScore: number | null };

/**
 * Judges one score change of the alert's address, its changes taken oldest first; null when the
 * change is not the alert's (another address's, or at or before its baselineChangeId), which
 * then neither fires nor moves the baseline. A firing resets the baseline to the change's score; a fall lowers it (a
 * rise is measured from the lowest score since the alert last fired: cleared 90 → 0, a wallet
 * that pays a sanctioned address again, 0 → 90, is paged again); so does the first change of an
 * alert without one (made before the service knew its address).
 */
export function judgeScoreChange(rule: AlertRule, state: ScoreAlertState, change: ScoreChange): ScoreJudgment | null {
  if (rule.condition !== "risk_score_increase" || change.address !== rule.address) return null;
  if (change.id <= state.baselineChangeId) return null;
  const firing = evaluateRiskScoreIncrease({ ...rule, baselineScore: state.baselineScore }, change);
  if (firing) return { firing, baselineScore: change.score };
  const lowered = state.baselineScore === null || change.score < state.baselineScore;
  return { firing: null, baselineScore: lowered ? change.score : state.baselineScore };
}
