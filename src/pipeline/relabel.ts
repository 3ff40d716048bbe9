// A label change (PUT /v1/risk/labels, or a removal: DELETE /v1/risk/labels), in two steps.
// First the labels commit, with a record that they are owed a rescore (label_rescores). Then,
// in a transaction of its own, the tracked addresses that ever dealt with a relabelled address
// are found and rescored (the service scores tracked addresses only: see scoring.ts), with the
// score changes owed an evaluation, and the record is deleted; the evaluation itself is a
// `risk` job.
// Why two steps: looked up inside the labels' own transaction, the addresses missed a batch
// stored after the look-up whose evaluation read the labels before they committed: a wallet
// that dealt with a newly sanctioned address in that window was never flagged. Now a batch
// stored before the look-up is found by it, and one stored after it is evaluated with the
// committed labels. A process that ends between the steps leaves the record: the reconciler
// rescores it. Should a risk job be lost, the reconciler finds the unevaluated changes in
// risk_score_history and enqueues them again.
import type { TransactionSql } from "postgres";
import type { Deps } from "../deps.ts";
import { lockAddressScores, insertScoreHistory, writeScores, type NewHistory, type NewScore } from "../db/queries/pipeline-writes.ts";
import {
  deleteLabels,
  insertLabelRescore,
  labelExposure,
  shareLabelExposure,
  takeLabelRescore,
  trackedCounterpartiesOf,
  upsertLabels,
  type LabelInput,
} from "../db/queries/risk-labels.ts";
import { riskScore } from "../domain/risk/index.ts";
import { RISK_FACTORS, type RiskFactor } from "../domain/types.ts";
import { enqueueScoreEvaluation } from "./enqueue-risk.ts";
import { retryTransaction } from "./retry.ts";
import { isLabelFactor, labelFactorsOf, sameFactors } from "./scoring.ts";

/** Addresses rescored per round trip. */
const RESCORE_CHUNK = 5_000;
export const LABELS_CAUSE = "labels";

export type RelabelResult = { upserted: number; rescored: number; scoreChangeIds: number[] };

export async function applyLabels(deps: Pick<Deps, "sql" | "queues" | "logger">, labels: readonly LabelInput[]): Promise<RelabelResult> {
  const { upserted, rescoreId } = await recordLabels(deps, labels);
  return { upserted, ...(await rescoreAfterCommit(deps, rescoreId)) };
}

/** The first step: the labels, and (when any changed) the record of the rescore they are owed. */
export async function recordLabels(
  deps: Pick<Deps, "sql">,
  labels: readonly LabelInput[],
): Promise<{ upserted: number; rescoreId: number | null }> {
  // The last of several labels for one address wins, as if they had been sent one by one.
  const byAddress = new Map(labels.map((label) => [label.address, label]));
  const { rescoreId } = await commitLabelChange(deps, (tx) => upsertLabels(tx, [...byAddress.values()]));
  return { upserted: byAddress.size, rescoreId };
}

export type RemovalResult = { removed: number; rescored: number; scoreChangeIds: number[] };

/**
 * A removal (DELETE /v1/risk/labels: a delisting, a row loaded by mistake) is a label change
 * like any other: the same two steps, the same record, the same rescore, the same reconciler.
 * The tracked addresses that dealt with a removed address lose its factor and their scores fall.
 */
export async function removeLabels(deps: Pick<Deps, "sql" | "queues" | "logger">, addresses: readonly string[]): Promise<RemovalResult> {
  const { removed, rescoreId } = await recordLabelRemovals(deps, addresses);
  return { removed, ...(await rescoreAfterCommit(deps, rescoreId)) };
}

/** The first step of a removal: the labels deleted, and (when any was there) the record of the rescore owed. */
export async function recordLabelRemovals(
  deps: Pick<Deps, "sql">,
  addresses: readonly string[],
): Promise<{ removed: number; rescoreId: number | null }> {
  const unique = [...new Set(addresses)].sort();
  const { changed, rescoreId } = await commitLabelChange(deps, (tx) => deleteLabels(tx, unique));
  return { removed: changed.length, rescoreId };
}

/**
 * The first step of any label change, in one transaction: `write` changes the labels and names
 * the addresses whose labels changed, and the record of the rescore they are owed (when any)
 * commits with them.
 */
async function commitLabelChange(
  deps: Pick<Deps, "sql">,
  write: (tx: TransactionSql) => Promise<string[]>,
): Promise<{ changed: string[]; rescoreId: number | null }> {
  return retryTransaction(() =>
    deps.sql.begin(async (tx) => {
      // Beside a tracking (track-wallet.ts), one of the two must see the other: held until commit,
      // this lock makes a tracking wait for this change, or this change wait for the new wallet.
      await shareLabelExposure(tx);
      const changed = await write(tx);
      return { changed, rescoreId: changed.length > 0 ? await insertLabelRescore(tx, changed) : null };
    }),
  );
}

/** The second step, at once after the first. */
async function rescoreAfterCommit(
  deps: Pick<Deps, "sql" | "queues" | "logger">,
  rescoreId: number | null,
): Promise<{ rescored: number; scoreChangeIds: number[] }> {
  if (rescoreId === null) return { rescored: 0, scoreChangeIds: [] };
  try {
    return await rescoreRelabelled(deps, rescoreId);
  } catch (error) {
    // The change is committed, and what is left is owed in Postgres (the rescore's record, or
    // the unevaluated score changes whose jobs could not be enqueued): the reconciler does it.
    deps.logger.warn({ err: error, rescoreId }, "labels: the rescore did not finish after the change committed; the reconciler will");
    return { rescored: 0, scoreChangeIds: [] };
  }
}

/** The second step (also the reconciler's): rescores what an owed rescore names, unless another process took it. */
export async function rescoreRelabelled(
  deps: Pick<Deps, "sql" | "queues">,
  rescoreId: number,
): Promise<{ rescored: number; scoreChangeIds: number[] }> {
  const result = await retryTransaction(() =>
    deps.sql.begin(async (tx) => {
      const changed = await takeLabelRescore(tx, rescoreId);
      if (changed === null) return { rescored: 0, scoreChangeIds: [] };
      const affected = await trackedCounterpartiesOf(tx, changed);
      let rescored = 0;
      const ids: number[] = [];
      for (let start = 0; start < affected.length; start += RESCORE_CHUNK) {
        const written = await rescoreExposure(tx, affected.slice(start, start + RESCORE_CHUNK), {
          behaviour: "stored",
          cause: LABELS_CAUSE,
          evaluatedAt: null,
        });
        rescored += written.rescored;
        ids.push(...written.ids);
      }
      return { rescored, scoreChangeIds: ids.sort((a, b) => a - b) };
    }),
  );
  await enqueueScoreEvaluation(deps.queues, result.scoreChangeIds);
  return result;
}

export type RescoreOptions = {
  /**
   * The behavioural factors: as stored (they follow the address's own transactions), or none
   * (an address becoming tracked: what was stored then is stale, see track-wallet.ts).
   */
  behaviour: "stored" | "cleared";
  /** risk_score_history's cause. */
  cause: string;
  /** Set when no alert can be owed an evaluation of the changes; null leaves them to a risk job. */
  evaluatedAt: Date | null;
};

/** Label factors from the whole history; behavioural factors as `behaviour` says. */
export async function rescoreExposure(
  tx: TransactionSql,
  addresses: readonly string[],
  options: RescoreOptions,
): Promise<{ rescored: number; ids: number[] }> {
  // Locked first, then read: the lock may wait behind an evaluation (or another rescore) of
  // these addresses, and exposure read before it missed what that one committed meanwhile (a
  // payment to a sanctioned address, a corrected label), then overwrote its newer score.
  const stored = new Map((await lockAddressScores(tx, addresses)).map((row) => [row.address, row]));
  const exposure = new Map<string, RiskFactor[]>();
  for (const row of await labelExposure(tx, addresses)) {
    const list = exposure.get(row.address) ?? [];
    list.push(...labelFactorsOf([row]));
    exposure.set(row.address, list);
  }
  const writes: NewScore[] = [];
  const history: NewHistory[] = [];
  for (const address of addresses) {
    const current = stored.get(address) ?? { riskScore: 0, riskFactors: [] as RiskFactor[] };
    const behavioural = options.behaviour === "stored" ? current.riskFactors.filter((f) => !isLabelFactor(f)) : [];
    const present = new Set([...behavioural, ...(exposure.get(address) ?? [])]);
    const factors = RISK_FACTORS.filter((factor) => present.has(factor));
    const score = riskScore(factors);
    if (score === current.riskScore && sameFactors(factors, current.riskFactors)) continue;
    writes.push({ address, score, factors });
    if (score !== current.riskScore) history.push({ address, previousScore: current.riskScore, score, factors, cause: options.cause });
  }
  await writeScores(tx, writes);
  const ids = await insertScoreHistory(tx, history, options.evaluatedAt);
  return { rescored: writes.length, ids };
}
