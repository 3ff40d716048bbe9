// A label change (PUT /v1/risk/labels, or a removal: DELETE /v1/risk/labels), in two steps.
// First the labels commit, with a record that they are owed a rescore (label_rescores). Then the
// tracked addresses that ever dealt with a relabelled address are found and rescored (the
// service scores tracked addresses only: see scoring.ts), with the score changes owed an
// evaluation, and the record is deleted; the evaluation itself is a `risk` job.
// Why two steps: looked up inside the labels' own transaction, the addresses missed a batch
// stored after the look-up whose evaluation read the labels before they committed: a wallet
// that dealt with a newly sanctioned address in that window was never flagged. Now a batch
// stored before the look-up is found by it, and one stored after it is evaluated with the
// committed labels. A process that ends between the steps leaves the record: the reconciler
// rescores it. Should a risk job be lost, the reconciler finds the unevaluated changes in
// risk_score_history and enqueues them again.
// The second step runs in chunks of RESCORE_CHUNK addresses, each a transaction of its own, in
// address order: a chunk locks its wallets' scores (in address order, as an evaluation locks
// them), reads their labels and history, writes, and commits, so its locks last one chunk's
// time, not the whole rescore's (a hub relabelled that 10,000 wallets dealt with held every one
// of their scores for seconds, and every evaluation of them waited), and no two chunks lock in
// the opposite order of an evaluation. The record stays until the last chunk commits; each
// chunk claims it again (claimLabelRescore), which renews its lease: the reconciler leaves a
// rescore in progress alone (a chunk under way, however long, holds the record), takes over one
// untouched for its grace period with no chunk under way (the process ended mid-rescore, or
// stalled between chunks), and the run it took over stops at its next chunk. Each chunk records
// the last wallet it rescored (label_rescores.done_through) in its own transaction, and a run that
// takes the rescore over continues after it: after a large import, a process that ended at its
// 300th chunk left 299 chunks that are not done again (once at every take-over, were it to keep
// ending there). The take-over looks the wallets up afresh, those after done_through only: one
// that dealt with a relabelled address since the first look-up is scored by its own batch's
// evaluation, which reads the committed labels, whichever side of done_through it sorts.
import type { TransactionSql } from "postgres";
import type { Deps } from "../deps.ts";
import { lockAddressScores, insertScoreHistory, writeScores, type LockedScore, type NewHistory, type NewScore } from "../db/queries/pipeline-writes.ts";
import {
  claimLabelRescore,
  deleteLabels,
  finishLabelRescore,
  insertLabelRescore,
  labelExposure,
  recordLabelRescoreProgress,
  shareLabelExposure,
  trackedCounterpartiesOf,
  upsertLabels,
  type Exposure,
  type LabelInput,
} from "../db/queries/risk-labels.ts";
import { insertLabelChanges, type LabelChange, type LabelLoad } from "../db/queries/label-changes.ts";
import { riskScore } from "../domain/risk/index.ts";
import { RISK_FACTORS, type RiskFactor } from "../domain/types.ts";
import { newId } from "../ids.ts";
import { enqueueScoreEvaluation } from "./enqueue-risk.ts";
import type { AddressActivity } from "./activity.ts";
import { retryTransaction } from "./retry.ts";
import { behaviouralFactors, isLabelFactor, labelFactorsOf, sameFactors } from "./scoring.ts";

/**
 * Addresses rescored per transaction (a chunk of a rescore): what an evaluation of one of them may
 * wait for. A chunk reads its wallets' whole histories: at 100 transactions each, 10,000 wallets took
 * about 5 s, so a chunk of 1,000 holds its locks about half a second, and stays well inside the
 * reconciler's grace period (a chunk longer than that lets the reconciler take the rescore over).
 */
export const RESCORE_CHUNK = 1_000;
export const LABELS_CAUSE = "labels";

/**
 * risk_score_history's cause for a label load's rescore: `labels:<load id>`, the load whose
 * label_changes rows say what changed, by whom. The rescore's record keeps the load, so one the
 * reconciler finishes names it too; one owed before migration 0028 says `labels` alone.
 */
export const labelsCause = (loadId: string | null): string => (loadId === null ? LABELS_CAUSE : `${LABELS_CAUSE}:${loadId}`);

/** `changed`: the addresses of which a label is new, changed or removed; `changedLabels`: the labels. */
export type RelabelResult = { loadId: string; upserted: number; changed: number; changedLabels: number; rescored: number; scoreChangeIds: number[] };

/** PUT /v1/risk/labels: `by` is the caller's sub, kept on the labels it changes and on its label_changes rows. */
export async function applyLabels(deps: Pick<Deps, "sql" | "queues" | "logger">, labels: readonly LabelInput[], by: string): Promise<RelabelResult> {
  const recorded = await recordLabels(deps, labels, by);
  return { ...recorded, ...(await rescoreAfterCommit(deps, recorded.rescoreId)) };
}

/**
 * The first step: the labels, what they changed (label_changes, under a new load id), and (when
 * any changed) the record of the rescore they are owed. `changed` counts the addresses of which
 * a label is new or changed its category or score.
 */
export async function recordLabels(
  deps: Pick<Deps, "sql">,
  labels: readonly LabelInput[],
  by: string,
): Promise<{ loadId: string; upserted: number; changed: number; changedLabels: number; rescoreId: number | null }> {
  // The last of several labels for one address and source wins, as if they had been sent one by one.
  const byKey = new Map(labels.map((label) => [JSON.stringify([label.address, label.source]), label]));
  const load = { id: newId("lld"), by };
  const { changes, changed, rescoreId } = await commitLabelChange(deps, load, (tx) => upsertLabels(tx, [...byKey.values()], by));
  return { loadId: load.id, upserted: byKey.size, changed: changed.length, changedLabels: changes.length, rescoreId };
}

export type RemovalResult = { loadId: string; removed: number; changed: number; rescored: number; scoreChangeIds: number[] };

/**
 * A removal (DELETE /v1/risk/labels: a delisting, a row loaded by mistake) is a label change
 * like any other: the same two steps, the same record, the same rescore, the same reconciler.
 * The tracked addresses that dealt with a removed address lose its factor (unless another list
 * labels it so too) and their scores fall. `source`: only that list's labels (null: those loaded
 * without a source); undefined: every list's. `by`: the caller's sub, on its label_changes rows.
 */
export async function removeLabels(
  deps: Pick<Deps, "sql" | "queues" | "logger">,
  addresses: readonly string[],
  source: string | null | undefined,
  by: string,
): Promise<RemovalResult> {
  const { loadId, removed, changed, rescoreId } = await recordLabelRemovals(deps, addresses, source, by);
  return { loadId, removed, changed, ...(await rescoreAfterCommit(deps, rescoreId)) };
}

/**
 * The first step of a removal: the labels deleted, each recorded in label_changes, and (when any
 * was there) the record of the rescore owed. `removed` counts the labels, `changed` the addresses
 * that lost one.
 */
export async function recordLabelRemovals(
  deps: Pick<Deps, "sql">,
  addresses: readonly string[],
  source: string | null | undefined,
  by: string,
): Promise<{ loadId: string; removed: number; changed: number; rescoreId: number | null }> {
  const unique = [...new Set(addresses)].sort();
  const load = { id: newId("lld"), by };
  const { changes, changed, rescoreId } = await commitLabelChange(deps, load, (tx) => deleteLabels(tx, unique, source));
  return { loadId: load.id, removed: changes.length, changed: changed.length, rescoreId };
}

/**
 * The first step of any label change, in one transaction: `write` changes the labels and says
 * what it changed; the load's label_changes rows, and the record of the rescore the changed
 * addresses are owed (when any), commit with them.
 */
async function commitLabelChange(
  deps: Pick<Deps, "sql">,
  load: LabelLoad,
  write: (tx: TransactionSql) => Promise<LabelChange[]>,
): Promise<{ changes: LabelChange[]; changed: string[]; rescoreId: number | null }> {
  return retryTransaction(() =>
    deps.sql.begin(async (tx) => {
      // Beside a tracking (track-wallet.ts), one of the two must see the other: held until commit,
      // this lock makes a tracking wait for this change, or this change wait for the new wallet.
      await shareLabelExposure(tx);
      const changes = await write(tx);
      await insertLabelChanges(tx, load, changes);
      const changed = [...new Set(changes.map((change) => change.address))];
      return { changes, changed, rescoreId: changed.length > 0 ? await insertLabelRescore(tx, changed, load.id) : null };
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
    return await rescoreRelabelled(deps, rescoreId, RESCORE_CHUNK);
  } catch (error) {
    // The change is committed, and what is left is owed in Postgres (the rescore's record, or
    // the unevaluated score changes whose jobs could not be enqueued): the reconciler does it.
    deps.logger.warn({ err: error, rescoreId }, "labels: the rescore did not finish after the change committed; the reconciler will");
    return { rescored: 0, scoreChangeIds: [] };
  }
}

/**
 * The second step (also the reconciler's): rescores what an owed rescore names, chunk by chunk in
 * address order, each chunk committed on its own, unless another process took it (or finished it)
 * first. The rises of each chunk are enqueued for the risk workers once it commits; when that
 * fails (Redis down), the rest is still rescored, the failure is thrown at the end, and the
 * reconciler enqueues the unevaluated changes.
 */
export async function rescoreRelabelled(
  deps: Pick<Deps, "sql" | "queues">,
  rescoreId: number,
  chunkSize: number = RESCORE_CHUNK,
  /** The reconciler's take-over: only a rescore untouched since then, and no chunk of it under way. */
  staleBefore?: Date,
): Promise<{ rescored: number; scoreChangeIds: number[] }> {
  let lease: string | null = null;
  // Looked up once, in the first chunk's transaction (after the labels committed), in address
  // order: the wallets after those that the chunks of an earlier run (ended, or taken over) committed.
  let affected: string[] | null = null;
  let done = 0;
  let rescored = 0;
  const ids: number[] = [];
  let enqueueFailed: { error: unknown } | null = null;
  for (;;) {
    const chunk = await retryTransaction(() =>
      deps.sql.begin(async (tx) => {
        const claimed = await claimLabelRescore(tx, rescoreId, lease, lease === null ? staleBefore : undefined);
        if (claimed === null) return null;
        const all = affected ?? (await trackedCounterpartiesOf(tx, claimed.addresses, claimed.doneThrough));
        const wallets = all.slice(done, done + chunkSize);
        // Named after the load that owes it, as its record keeps it (whoever finishes it).
        const cause = labelsCause(claimed.loadId);
        const written = await rescoreExposure(tx, wallets, { behaviour: "stored", cause, evaluatedAt: null });
        const last = done + chunkSize >= all.length;
        if (last) await finishLabelRescore(tx, rescoreId);
        else await recordLabelRescoreProgress(tx, rescoreId, wallets.at(-1)!);
        return { lease: claimed.lease, all, written, last };
      }),
    );
    // Done by another process, or taken over by the reconciler (which continues after this run's last chunk).
    if (chunk === null) break;
    lease = chunk.lease;
    affected = chunk.all;
    done += chunkSize;
    rescored += chunk.written.rescored;
    ids.push(...chunk.written.ids);
    if (enqueueFailed === null) {
      try {
        await enqueueScoreEvaluation(deps.queues, chunk.written.ids);
      } catch (error) {
        enqueueFailed = { error };
      }
    }
    if (chunk.last) break;
  }
  if (enqueueFailed !== null) throw enqueueFailed.error;
  return { rescored, scoreChangeIds: ids.sort((a, b) => a - b) };
}

export type RescoreOptions = {
  /**
   * The behavioural factors: as stored (they follow the address's own transactions); from the
   * activity counters (an address becoming tracked, scored on the counters its tracking seeded:
   * what was stored then is stale, see track-wallet.ts; an address missing from the map has
   * none); or none (one becoming tracked whose counters could not be seeded).
   */
  behaviour: "stored" | { counted: ReadonlyMap<string, AddressActivity> } | "cleared";
  /** risk_score_history's cause. */
  cause: string;
  /** Set when no alert can be owed an evaluation of the changes; null leaves them to a risk job. */
  evaluatedAt: Date | null;
  /**
   * The addresses' label exposure as the caller read it (a tracking, mostly before it takes
   * ingest's lock: track-wallet.ts says why nothing is missed); absent, it is read here, once
   * the scores are locked.
   */
  exposure?: readonly Exposure[];
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
  for (const row of options.exposure ?? (await labelExposure(tx, addresses))) {
    const list = exposure.get(row.address) ?? [];
    list.push(...labelFactorsOf([row]));
    exposure.set(row.address, list);
  }
  const writes: NewScore[] = [];
  const history: NewHistory[] = [];
  for (const address of addresses) {
    const current = stored.get(address) ?? { address, riskScore: 0, riskFactors: [], balance: 0 };
    const behavioural = behaviourOf(options.behaviour, current);
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

function behaviourOf(behaviour: RescoreOptions["behaviour"], current: LockedScore): RiskFactor[] {
  if (behaviour === "stored") return current.riskFactors.filter((factor) => !isLabelFactor(factor));
  if (behaviour === "cleared") return [];
  const activity = behaviour.counted.get(current.address);
  return activity ? behaviouralFactors(activity, current.balance) : [];
}
