// Writes new risk scores inside the evaluation's transaction. Each changed address is locked
// and re-read first: when another writer (a label change, a concurrent batch) moved its
// stored factors since the score was computed, it is recomputed from what is stored now,
// so a concurrent update is built upon, never overwritten.
import type { TransactionSql } from "postgres";
import { insertScoreHistory, lockAddressScores, writeScores, type NewHistory, type NewScore } from "../db/queries/pipeline-writes.ts";
import type { ScoreChange } from "../domain/conditions/index.ts";
import type { RiskFactor } from "../domain/types.ts";
import { sameFactors, type ScoreResult } from "./scoring.ts";

export type PendingScore = {
  address: string;
  basedOn: { score: number; factors: readonly RiskFactor[] };
  next: ScoreResult;
  recompute: (storedFactors: readonly RiskFactor[]) => ScoreResult;
};

export type WrittenScores = {
  /** The score changes recorded (risk_score_history rows), oldest id first. */
  changes: ScoreChange[];
  /** The score and factors now stored, for every address written. */
  scores: Map<string, ScoreResult>;
};

export async function recordScores(
  tx: TransactionSql,
  pending: readonly PendingScore[],
  cause: string,
  evaluatedAt: Date | null,
): Promise<WrittenScores> {
  if (pending.length === 0) return { changes: [], scores: new Map() };
  const locked = new Map((await lockAddressScores(tx, pending.map((p) => p.address))).map((row) => [row.address, row]));
  const writes: NewScore[] = [];
  const history: NewHistory[] = [];
  const scores = new Map<string, ScoreResult>();
  for (const update of pending) {
    const stored = locked.get(update.address) ?? { riskScore: 0, riskFactors: [] as RiskFactor[] };
    const unchanged = stored.riskScore === update.basedOn.score && sameFactors(stored.riskFactors, update.basedOn.factors);
    const next = unchanged ? update.next : update.recompute(stored.riskFactors);
    if (next.score === stored.riskScore && sameFactors(next.factors, stored.riskFactors)) continue;
    writes.push({ address: update.address, score: next.score, factors: next.factors });
    scores.set(update.address, next);
    if (next.score !== stored.riskScore) {
      history.push({ address: update.address, previousScore: stored.riskScore, score: next.score, factors: next.factors });
    }
  }
  await writeScores(tx, writes);
  const ids = await insertScoreHistory(tx, history, cause, evaluatedAt);
  const changes = history
    .map((h) => ({ id: ids.get(h.address)!, address: h.address, previousScore: h.previousScore, score: h.score, factors: h.factors }))
    .sort((a, b) => a.id - b.id);
  return { changes, scores };
}
