// Risk scoring of the tracked addresses a batch touched: the pure risk engine fed with what the
// pipeline counted (activity counters) and looked up (labels of the batch's counterparties).
//
// Only tracked addresses (by any caller) are counted and scored. The feed brings the
// transactions that have a tracked wallet on one side, so what the service sees of any other
// address is only its dealings with tracked wallets: a velocity, failure ratio or dormancy
// measured on that sample describes the callers' choice of wallets, not the address, and an
// exchange's hot wallet that pays many tracked wallets' withdrawals would look like a burst of
// new counterparties. Leaving them out also bounds the counters' memory by the tracked wallets, not
// by every counterparty of the last week, and was measured to more than double evaluation's
// rate (bench:pipeline, evaluating a backlog: 11,186 → 26,549 tx/s). A counterparty's risk is
// its label score, or its own score when it is itself tracked.
//
// Label exposure is sticky: an address that once dealt with a sanctioned, mixer, scam or
// flagged counterparty keeps that factor. The batch path only adds exposure (the label
// factors already stored for the address stay, the batch's labelled counterparties add
// theirs); a label change (PUT /v1/risk/labels) recomputes exposure from the whole history.
// Every label of a counterparty counts, one per list that labelled it: the factors are the
// union of theirs (OFAC's `sanctioned` and a vendor's `mixer` on one address: both factors).
// Behavioural factors are recomputed from the counters each time the address transacts.
import type { AddressStateRow, LabelRow } from "../db/queries/pipeline.ts";
import { labelFactor, riskFactors, riskScore, type RiskInputs } from "../domain/risk/index.ts";
import type { LabelCategory, RiskFactor } from "../domain/types.ts";
import type { AddressActivity } from "./activity.ts";

type Label = { category: LabelCategory; score: number };

/** The label factors, each with a label that produces it (to hand stored exposure back to the engine). */
const LABEL_FACTOR_SOURCES: ReadonlyMap<RiskFactor, Label> = new Map<RiskFactor, Label>([
  ["sanctioned_counterparty", { category: "sanctioned", score: 100 }],
  ["mixer_interaction", { category: "mixer", score: 100 }],
  ["scam_interaction", { category: "scam", score: 100 }],
  ["flagged_counterparty", { category: "flagged", score: 100 }],
]);

export const isLabelFactor = (factor: RiskFactor): boolean => LABEL_FACTOR_SOURCES.has(factor);

/** The exposure an address already carries, as labels the engine turns back into the same factors. */
export function storedExposure(factors: readonly RiskFactor[]): Label[] {
  return factors.flatMap((factor) => {
    const label = LABEL_FACTOR_SOURCES.get(factor);
    return label ? [label] : [];
  });
}

/** Label factors of a set of labels (exposure recomputed from history): one per label, the union of them all. */
export function labelFactorsOf(labels: readonly Label[]): RiskFactor[] {
  return labels.flatMap((label) => {
    const factor = labelFactor(label.category, label.score);
    return factor ? [factor] : [];
  });
}

export type ScoreResult = { score: number; factors: RiskFactor[] };

export function scoreFromActivity(
  storedFactors: readonly RiskFactor[],
  batchLabels: readonly LabelRow[],
  activity: AddressActivity,
  balanceSol: number,
): ScoreResult {
  const inputs: RiskInputs = {
    counterpartyLabels: [...storedExposure(storedFactors), ...batchLabels],
    transactionsLastHour: activity.transactionsLastHour,
    previous7DaysCount: activity.previous7DaysCount,
    transactions24h: activity.transactions24h,
    failed24h: activity.failed24h,
    solOutflow24h: activity.solOutflow24h,
    balanceSol,
    newCounterpartiesLastHour: activity.newCounterpartiesLastHour,
    secondsSincePreviousSend: activity.dormantGapSeconds,
  };
  const factors = riskFactors(inputs);
  return { score: riskScore(factors), factors };
}

/**
 * The behavioural factors the counters give, as an evaluation computes them (the windows end at
 * the newest transaction counted): an address becoming tracked is scored on its seeded counters.
 */
export const behaviouralFactors = (activity: AddressActivity, balanceSol: number): RiskFactor[] =>
  scoreFromActivity([], [], activity, balanceSol).factors;

export const sameFactors = (a: readonly RiskFactor[], b: readonly RiskFactor[]): boolean =>
  a.length === b.length && a.every((factor) => b.includes(factor));

/** A new score for an address, with what it was computed from (re-checked under lock at commit). */
export type ScoreUpdate = {
  address: string;
  /** The stored score and factors the new ones were computed from. */
  basedOn: { score: number; factors: RiskFactor[] };
  /** The labels of the batch's counterparties they were computed with (every source's, each counterparty's once). */
  labels: readonly LabelRow[];
  next: ScoreResult;
  /**
   * Recomputes from other stored factors or labels (when a concurrent writer, a label change
   * among them, changed them meanwhile).
   */
  recompute: (storedFactors: readonly RiskFactor[], labels: readonly LabelRow[]) => ScoreResult;
};

const NO_LABELS: readonly LabelRow[] = [];

/** Scores every touched address; returns those whose score or factors change. */
export function scoreTouchedAddresses(
  activity: ReadonlyMap<string, AddressActivity>,
  states: ReadonlyMap<string, AddressStateRow>,
  batchLabels: ReadonlyMap<string, LabelRow[]>,
): ScoreUpdate[] {
  const updates: ScoreUpdate[] = [];
  for (const [address, counts] of activity) {
    const state = states.get(address);
    const basedOn = { score: state?.riskScore ?? 0, factors: state?.riskFactors ?? [] };
    const labels = batchLabels.get(address) ?? NO_LABELS;
    const balance = state?.balance ?? 0;
    const next = scoreFromActivity(basedOn.factors, labels, counts, balance);
    if (next.score !== basedOn.score || !sameFactors(next.factors, basedOn.factors)) {
      // The closure only for the few that change: most touched addresses keep their score.
      const recompute = (stored: readonly RiskFactor[], current: readonly LabelRow[]) =>
        scoreFromActivity(stored, current, counts, balance);
      updates.push({ address, basedOn, labels, next, recompute });
    }
  }
  return updates;
}
