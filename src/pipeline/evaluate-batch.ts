// Evaluates one ingest batch: a handful of set-based reads, one Lua call for the activity
// counters, pure evaluation in memory, then ONE Postgres transaction that records scores,
// events, notifications and the batch's "evaluated" mark together. Deliveries are enqueued
// after the commit; if that fails, the reconciler enqueues the pending notifications later.
import type { Deps } from "../deps.ts";
import {
  findBatch,
  loadActiveAlerts,
  loadAddressStates,
  loadBatchTransactions,
  loadLabels,
} from "../db/queries/pipeline.ts";
import { lockBatch, markBatchEvaluated } from "../db/queries/pipeline-writes.ts";
import { enqueueDeliveries } from "../queue/deliveries.ts";
import { applyBatchActivity } from "./activity.ts";
import { counterpartyRisk, labelledCounterparties, sidesByAddress, touchedAddresses } from "./batch-facts.ts";
import { recordEvents } from "./record-events.ts";
import { recordScores } from "./record-scores.ts";
import { retryTransaction } from "./retry.ts";
import { scoreTouchedAddresses } from "./scoring.ts";
import { evaluateTransactions, groupByAddress } from "./transaction-firings.ts";

export type PipelineDeps = Pick<Deps, "sql" | "redis" | "queues" | "logger" | "now"> & {
  config: Pick<Deps["config"], "queuePrefix">;
};

export type BatchOutcome =
  | { status: "missing" | "already-evaluated" }
  | { status: "evaluated"; transactions: number; events: number; notifications: number; scoreChanges: number };

export async function evaluateBatch(deps: PipelineDeps, batchId: string): Promise<BatchOutcome> {
  const { sql } = deps;
  const batch = await findBatch(sql, batchId);
  if (!batch) {
    deps.logger.warn({ batchId }, "evaluate: no such batch (job outlived its data?)");
    return { status: "missing" };
  }
  if (batch.evaluated) return { status: "already-evaluated" };

  const txs = await loadBatchTransactions(sql, batchId);
  const addresses = touchedAddresses(txs);
  const [alerts, labelRows, stateRows] = await Promise.all([
    loadActiveAlerts(sql, addresses),
    loadLabels(sql, addresses),
    loadAddressStates(sql, addresses),
  ]);
  const labels = new Map(labelRows.map((row) => [row.address, row]));
  const states = new Map(stateRows.map((row) => [row.address, row]));
  const alertsByAddress = groupByAddress(alerts);
  const needWindows = new Set(alerts.filter((a) => a.condition === "unusual_activity").map((a) => a.address));

  const sides = sidesByAddress(txs, needWindows);
  const activity = await applyBatchActivity(
    deps.redis,
    deps.config.queuePrefix,
    batchId,
    [...sides.values()].map((s) => s.events),
  );
  const pendingScores = scoreTouchedAddresses(activity, states, labelledCounterparties(txs, labels));
  const txFirings = evaluateTransactions(txs, alertsByAddress, {
    sides,
    activity,
    counterparty: (address) => counterpartyRisk(address, labels, states),
  });
  const scoreAlerts = groupByAddress(alerts.filter((a) => a.condition === "risk_score_increase"));

  const now = deps.now();
  const recorded = await retryTransaction(() =>
    sql.begin(async (tx) => {
      const locked = await lockBatch(tx, batchId);
      if (!locked || locked.evaluated) return null;
      const written = await recordScores(tx, pendingScores, `batch:${batchId}`, now);
      const recordedEvents = await recordEvents(tx, {
        now,
        txFirings,
        changes: written.changes,
        scoreAlerts,
        risk: (address) => {
          const state = states.get(address);
          return written.scores.get(address) ?? { score: state?.riskScore ?? 0, factors: state?.riskFactors ?? [] };
        },
      });
      await markBatchEvaluated(tx, batchId, now);
      return { ...recordedEvents, scoreChanges: written.changes.length };
    }),
  );
  if (!recorded) return { status: "already-evaluated" };
  await enqueueDeliveries(deps.queues, recorded.deliveries);
  return {
    status: "evaluated",
    transactions: txs.length,
    events: recorded.events,
    notifications: recorded.deliveries.length,
    scoreChanges: recorded.scoreChanges,
  };
}
