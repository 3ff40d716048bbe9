// Evaluates ingest batches, oldest first, in runs: a job evaluates the oldest open batches
// that no other evaluation holds, as one group (claimBatchGroup), and goes on with the next
// run until its own batch is evaluated (by it, or by another evaluation). A group costs a
// handful of set-based reads, a few Lua calls for the activity counters of its tracked
// addresses (the only ones the service scores: see scoring.ts), counted only after the
// earlier runs (count-order.ts), and pure evaluation in memory, then the writes: scores,
// events, notifications and the batches' "evaluated" marks commit together, in the
// transaction that holds the claim. Inside a group, each batch is counted, scored and checked
// in turn, on what the batches before it left: a group fires what its batches would fire one
// at a time, so what fires does not depend on the load. Grouping is what keeps up with a
// backlog: per transaction, a larger group touches fewer distinct addresses to look up and
// lock, and needs fewer statements. Deliveries are enqueued after the commit; if that fails,
// the reconciler enqueues the pending notifications later.
import type { Deps } from "../deps.ts";
import {
  findBatch,
  loadAddressStates,
  loadBatchTransactions,
  loadLabels,
  loadScoreAlerts,
  loadStoredSends,
  loadWalletsOfOwners,
} from "../db/queries/pipeline.ts";
import { ownWalletsOf } from "../domain/conditions/index.ts";
import {
  claimBatchGroup,
  isBatchClaimed,
  lockOpenScoreChanges,
  markBatchesEvaluated,
  markScoreChangesEvaluated,
} from "../db/queries/pipeline-writes.ts";
import { enqueueDeliveries } from "../queue/deliveries.ts";
import { applyActivityInOrder, flagCountedBatches, forgetCountedBatches } from "./activity.ts";
import { alertsByNeed } from "./alert-rules.ts";
import { touchedAddresses } from "./batch-facts.ts";
import { groupByAddress } from "./transaction-firings.ts";
import { batchSteps, evaluateSteps, stepEvents } from "./batch-steps.ts";
import { EarlierBatchReleased, waitForEarlierCounts, waitForEarlierEvaluations } from "./count-order.ts";
import { recordEvents } from "./record-events.ts";
import { recordScores } from "./record-scores.ts";
import { retryTransaction } from "./retry.ts";
import { sendRanges, trailingSendsLookup } from "./send-windows.ts";

export type PipelineDeps = Pick<Deps, "sql" | "redis" | "queues" | "logger" | "now" | "alertRules"> & {
  config: Pick<Deps["config"], "queuePrefix" | "evaluationGroupTransactions" | "evaluationOrderWaitMs">;
};

export type BatchOutcome =
  | { status: "missing" | "already-evaluated" | "claimed-elsewhere" }
  | ({
      status: "evaluated";
      /** The transactions of each group this job evaluated, in order (usually one group). */
      groups: number[];
    } & GroupTotals);

/** What one or more evaluated groups came to. */
type GroupTotals = {
  /** Batches evaluated: the job's own, unless another evaluation took it, and those around it. */
  batches: number;
  transactions: number;
  events: number;
  notifications: number;
  scoreChanges: number;
};

/** How long a job waits before looking again when every open batch ahead is held elsewhere. */
const HELD_AHEAD_PAUSE_MS = 20;

/**
 * Evaluates runs until `batchId` is evaluated. `stopping` is asked between runs: a job working
 * through a long backlog ends there when its worker is closing, instead of holding the close.
 */
export async function evaluateBatch(deps: PipelineDeps, batchId: string, stopping: () => boolean = () => false): Promise<BatchOutcome> {
  const batch = await findBatch(deps.sql, batchId);
  if (!batch) {
    deps.logger.warn({ batchId }, "evaluate: no such batch (job outlived its data?)");
    return { status: "missing" };
  }
  if (batch.evaluated) return { status: "already-evaluated" };

  const groups: GroupTotals[] = [];
  for (;;) {
    const group = await evaluateOldestRun(deps);
    if (group === "released") continue;
    if (group) groups.push(group);
    // Done when this run held it (the usual case: no query), or another evaluation finished it.
    if (group?.batchIds.includes(batchId) || (await findBatch(deps.sql, batchId))?.evaluated !== false) break;
    // Still open: another evaluation holds it (and will finish it), or it waits behind runs
    // that others hold (then look again shortly).
    if (await isBatchClaimed(deps.sql, batchId)) break;
    // A stopping worker ends the walk after a run it did (one that has done none goes on as before).
    if (groups.length > 0 && stopping()) {
      deps.logger.info({ batchId, groups: groups.length }, "evaluate: worker stopping; the batch is left for the reconciler");
      break;
    }
    if (!group) await new Promise((resolve) => setTimeout(resolve, HELD_AHEAD_PAUSE_MS));
  }
  if (groups.length === 0) return { status: "claimed-elsewhere" };
  const sum = (pick: (group: GroupTotals) => number) => groups.reduce((total, group) => total + pick(group), 0);
  return {
    status: "evaluated",
    groups: groups.map((group) => group.transactions),
    batches: sum((g) => g.batches),
    transactions: sum((g) => g.transactions),
    events: sum((g) => g.events),
    notifications: sum((g) => g.notifications),
    scoreChanges: sum((g) => g.scoreChanges),
  };
}

/**
 * Evaluates the oldest run of open batches that no other evaluation holds. Undefined when
 * there is none; "released" when an earlier batch was let go uncounted (claim again).
 */
async function evaluateOldestRun(
  deps: PipelineDeps,
): Promise<(GroupTotals & { batchIds: string[] }) | undefined | "released"> {
  const { sql } = deps;
  let recorded;
  try {
    recorded = await retryTransaction(() =>
      sql.begin(async (tx) => {
        // Up to EVALUATION_GROUP_TRANSACTIONS (plus the rest of the batch that crosses it).
        const { batches: group, heldBefore } = await claimBatchGroup(tx, deps.config.evaluationGroupTransactions);
        if (group.length === 0) return null;
        const batchIds = group.map((claimed) => claimed.id);

        // Reads go through the pool, beside the claiming transaction: all of it is committed data.
        const txs = await loadBatchTransactions(sql, batchIds);
        const addresses = touchedAddresses(txs);
        const { alerts: alertsByAddress, tracked } = await deps.alertRules.lookup(addresses);
        const { needWindows, longestSendWindow, ownWalletOwners } = alertsByNeed(alertsByAddress);
        // The group is evaluated batch by batch, in ingest order, so that it fires what its
        // batches would fire evaluated one at a time: counted, scored and checked in turn.
        const steps = batchSteps(txs, batchIds, tracked, needWindows);
        // Redis counts (once the runs ahead are counted) while Postgres looks up: the two
        // largest waits of a group overlap.
        const counting = waitForEarlierCounts(deps, heldBefore).then(async () => {
          const counted = await applyActivityInOrder(deps.redis, deps.config.queuePrefix, stepEvents(steps));
          await flagCountedBatches(deps.redis, deps.config.queuePrefix, batchIds);
          return counted;
        });
        const [activities, labelRows, stateRows, storedSends, ownWalletRows] = await Promise.all([
          counting,
          loadLabels(sql, addresses),
          // Scores of tracked addresses only (an untracked counterparty's own score is not
          // used), once the runs ahead have committed theirs.
          waitForEarlierEvaluations(deps, heldBefore).then(() => loadAddressStates(sql, [...tracked])),
          // The stored sends that windowed large_transfer alerts sum (none read without one).
          loadStoredSends(sql, sendRanges(txs, longestSendWindow)),
          // The wallets of the owners whose large_transfer alerts leave out their own (none read without one).
          loadWalletsOfOwners(sql, [...ownWalletOwners]),
        ]);
        const ownWallets = ownWalletOwners.size === 0 ? undefined : ownWalletsOf(ownWalletRows);
        const states = byAddress(stateRows);
        // The activity reasons name a burst judged well after it by its time ("in the hour to 05:54 UTC").
        const evaluatedAt = deps.now().getTime() / 1000;
        const { txFirings, scoreSteps, armedJudged } = evaluateSteps(steps, {
          alertsByAddress,
          activities,
          labels: byAddress(labelRows),
          tracked,
          states,
          evaluatedAt,
          trailingSends: storedSends.size === 0 ? undefined : trailingSendsLookup(storedSends, new Set(txs.map((tx) => tx.signature)), ownWallets),
          ownWallets,
        });

        // The clock of the writes (events, cooldowns, "evaluated" marks) is read here, after the
        // waits for the runs ahead (up to EVALUATION_ORDER_WAIT each) and on every retry: read
        // when the run began, a notification could be stamped seconds before it was recorded,
        // and a later run's cooldown measured from that earlier time.
        const now = deps.now();
        const written = await recordScores(tx, scoreSteps, now);
        // The risk_score_increase alerts of the changed addresses, read now that their scores
        // are locked (see loadScoreAlerts): an alert created while this group was evaluated counts.
        const changed = [...new Set(written.changes.map((c) => c.address))];
        const scoreAlerts = groupByAddress(await loadScoreAlerts(tx, changed));
        // A label change's score change that its risk job has not evaluated yet (late, or lost
        // with Redis) happened before this group's change of the same address: it is evaluated
        // first, here, since each firing moves the alert's baseline (by the alerts that existed
        // and were active when it was made only: judgeScoreChange).
        const earlier = await lockOpenScoreChanges(
          tx,
          changed.filter((address) => scoreAlerts.has(address)),
        );
        const recordedEvents = await recordEvents(tx, {
          now,
          txFirings,
          changes: [...earlier, ...written.changes],
          scoreAlerts,
          armedJudged,
          risk: (address) => {
            const state = states.get(address);
            return written.scores.get(address) ?? { score: state?.riskScore ?? 0, factors: state?.riskFactors ?? [] };
          },
        });
        await markScoreChangesEvaluated(tx, earlier.map((c) => c.id), now);
        await markBatchesEvaluated(tx, batchIds, now);
        return { ...recordedEvents, batchIds, transactions: txs.length, scoreChanges: written.changes.length };
      }),
    );
  } catch (error) {
    if (error instanceof EarlierBatchReleased) return "released";
    throw error;
  }
  if (!recorded) return undefined;
  await enqueueDeliveries(deps.queues, recorded.deliveries, deps.redis, { nowMs: deps.now().getTime() });
  await forgetCountedBatches(deps.redis, deps.config.queuePrefix, recorded.batchIds).catch((error: unknown) =>
    deps.logger.warn({ err: error }, "evaluate: could not delete the activity markers (they expire in a day)"),
  );
  return {
    batchIds: recorded.batchIds,
    batches: recorded.batchIds.length,
    transactions: recorded.transactions,
    events: recorded.events,
    notifications: recorded.deliveries.length,
    scoreChanges: recorded.scoreChanges,
  };
}

function byAddress<Row extends { address: string }>(rows: readonly Row[]): Map<string, Row> {
  const map = new Map<string, Row>();
  for (const row of rows) map.set(row.address, row);
  return map;
}
