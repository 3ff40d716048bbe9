// Writes new risk scores inside the evaluation's transaction, batch by batch of the group.
// Each changed address is locked and re-read first: when another writer (a label change, a
// concurrent batch) moved its stored factors since the score was computed, it is recomputed
// from what is stored now, so a concurrent update is built upon, never overwritten. The
// labels the scores were computed with are read again too, once the addresses are locked: a
// label change that committed after the evaluation read them (a downgrade that took a factor
// away) must not be undone by the batch adding that factor back from the old label. A label
// change still under way locks the addresses after this commit and recomputes them itself.
import type { TransactionSql } from "postgres";
import { loadLabels, type LabelRow } from "../db/queries/pipeline.ts";
import { insertScoreHistory, lockAddressScores, writeScores, type NewHistory, type NewScore } from "../db/queries/pipeline-writes.ts";
import type { ScoreChange } from "../domain/conditions/index.ts";
import type { RiskFactor } from "../domain/types.ts";
import { sameFactors, type ScoreResult, type ScoreUpdate } from "./scoring.ts";

/** A score that a batch changes, as scoring.ts computed it. */
export type PendingScore = ScoreUpdate;

/** The new scores of one batch of a group, recorded with its cause. */
export type ScoreStep = { cause: string; pending: readonly PendingScore[] };

export type WrittenScores = {
  /** The score changes recorded (risk_score_history rows), in step order. */
  changes: ScoreChange[];
  /** The score and factors now stored, for every address written. */
  scores: Map<string, ScoreResult>;
};

/**
 * Records the steps' new scores in turn (an address may change in more than one step: each
 * change is its own history row, built on the one before).
 */
export async function recordScores(
  tx: TransactionSql,
  steps: readonly ScoreStep[],
  evaluatedAt: Date | null,
): Promise<WrittenScores> {
  const addresses = [...new Set(steps.flatMap((step) => step.pending.map((p) => p.address)))];
  if (addresses.length === 0) return { changes: [], scores: new Map() };
  const stored = new Map<string, StoredScore>(
    (await lockAddressScores(tx, addresses)).map((row) => [row.address, { riskScore: row.riskScore, riskFactors: row.riskFactors }]),
  );
  // After the locks, so that a label change committed before them is seen (none when the batch met no labelled counterparty).
  const labelled = [...new Set(steps.flatMap((step) => step.pending.flatMap((p) => p.labels.map((label) => label.address))))];
  const labelsNow = new Map((await loadLabels(tx, labelled)).map((entry) => [entry.address, entry.labels]));
  const scores = new Map<string, ScoreResult>();
  const history: NewHistory[] = [];
  for (const { cause, pending } of steps) {
    for (const update of pending) {
      const current = stored.get(update.address) ?? NO_SCORE;
      // Every label, every source's, of the counterparties the score was computed with, as they are now.
      const labels = [...new Set(update.labels.map((label) => label.address))].flatMap((address) => labelsNow.get(address) ?? []);
      const unchanged =
        current.riskScore === update.basedOn.score &&
        sameFactors(current.riskFactors, update.basedOn.factors) &&
        sameLabels(labels, update.labels);
      const next = unchanged ? update.next : update.recompute(current.riskFactors, labels);
      if (next.score === current.riskScore && sameFactors(next.factors, current.riskFactors)) continue;
      stored.set(update.address, { riskScore: next.score, riskFactors: next.factors });
      scores.set(update.address, next);
      if (next.score !== current.riskScore) {
        history.push({ address: update.address, previousScore: current.riskScore, score: next.score, factors: next.factors, cause });
      }
    }
  }
  const writes: NewScore[] = [...scores].map(([address, { score, factors }]) => ({ address, score, factors }));
  await writeScores(tx, writes);
  const ids = await insertScoreHistory(tx, history, evaluatedAt);
  const changes = history.map((h, i) => ({ id: ids[i]!, address: h.address, previousScore: h.previousScore, score: h.score, factors: h.factors }));
  return { changes, scores };
}

/**
 * The same set of labels: a label added, removed or changed (another list's label of the same
 * counterparty among them) since the score was computed makes them differ.
 */
function sameLabels(now: readonly LabelRow[], before: readonly LabelRow[]): boolean {
  // A label without a source (null) apart from a list named "null".
  const keys = (labels: readonly LabelRow[]) =>
    new Set(labels.map((l) => `${l.address}\u0000${l.source === null ? "-" : `+${l.source}`}\u0000${l.category}\u0000${l.score}`));
  const [a, b] = [keys(now), keys(before)];
  return a.size === b.size && [...a].every((key) => b.has(key));
}

type StoredScore = { riskScore: number; riskFactors: readonly RiskFactor[] };

const NO_SCORE: StoredScore = { riskScore: 0, riskFactors: [] };
