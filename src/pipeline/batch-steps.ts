// A group's batches as steps, evaluated in turn: each batch is checked against the alerts and
// scored on what the batches before it left (scores, a counterparty's too), so a group fires
// what its batches would fire one at a time. Pure: counts and rows come in, firings and new
// scores go out.
import type { ActiveAlertRow, AddressLabels, AddressStateRow, BatchTransaction } from "../db/queries/pipeline.ts";
import type { OwnWallets } from "../domain/conditions/index.ts";
import type { AddressActivity, AddressEvents } from "./activity.ts";
import { counterpartyRisk, labelledCounterparties, sidesByAddress, type AddressSides } from "./batch-facts.ts";
import type { ScoreStep } from "./record-scores.ts";
import { scoreTouchedAddresses } from "./scoring.ts";
import type { TrailingSendsLookup } from "./send-windows.ts";
import { evaluateTransactions, type TxFiring } from "./transaction-firings.ts";

export type BatchStep = { batchId: string; txs: BatchTransaction[]; sides: Map<string, AddressSides> };

/** The group's batches in order, each with its tracked addresses' events. */
export function batchSteps(
  txs: readonly BatchTransaction[],
  batchIds: readonly string[],
  tracked: ReadonlySet<string>,
  needWindows: ReadonlySet<string>,
): BatchStep[] {
  return splitByBatch(txs, batchIds).map((batchTxs, k) => {
    const sides = sidesByAddress(batchTxs, tracked);
    // Per-event window counts only where an unusual_activity alert will read them.
    for (const [address, side] of sides) if (needWindows.has(address)) side.events.needWindows = true;
    return { batchId: batchIds[k]!, txs: batchTxs, sides };
  });
}

/** The group's transactions batch by batch, in the order of `batchIds`, each batch's in chain order. */
function splitByBatch<Tx extends { batchId: string }>(txs: readonly Tx[], batchIds: readonly string[]): Tx[][] {
  if (batchIds.length === 1) return [[...txs]];
  const byBatch = new Map<string, Tx[]>(batchIds.map((batchId) => [batchId, []]));
  for (const tx of txs) byBatch.get(tx.batchId)?.push(tx);
  return [...byBatch.values()];
}

/** What the activity counters are given: each step's events per address. */
export const stepEvents = (steps: readonly BatchStep[]): AddressEvents[][] =>
  steps.map((step) => [...step.sides.values()].map((side) => side.events));

export type StepLookups = {
  alertsByAddress: ReadonlyMap<string, readonly ActiveAlertRow[]>;
  /** Each step's activity, as the counters answered it. */
  activities: ReadonlyArray<ReadonlyMap<string, AddressActivity>>;
  /** The labels of the group's addresses (every source's, the effective one first), by address. */
  labels: ReadonlyMap<string, AddressLabels>;
  tracked: ReadonlySet<string>;
  /** The tracked addresses' stored states: updated here, step by step, with the new scores. */
  states: Map<string, AddressStateRow>;
  /** When the group is judged (Unix seconds), for the activity reasons (FiringLookups). */
  evaluatedAt?: number;
  /** The windowed large_transfer alerts' trailing sums (FiringLookups). */
  trailingSends?: TrailingSendsLookup;
  /** The tracked wallets of the owners of alerts with ignoreOwnWallets (FiringLookups). */
  ownWallets?: OwnWallets;
};

/**
 * The firings of every step (in step order), each step's new scores, and the armed
 * unusual_activity alerts the steps judged (their arming is spent: record-events.ts).
 */
export function evaluateSteps(
  steps: readonly BatchStep[],
  lookups: StepLookups,
): { txFirings: TxFiring[]; scoreSteps: ScoreStep[]; armedJudged: Set<string> } {
  const { alertsByAddress, labels, tracked, states } = lookups;
  const txFirings: TxFiring[] = [];
  const armedJudged = new Set<string>();
  const scoreSteps = steps.map((step, k): ScoreStep => {
    const activity = lookups.activities[k]!;
    // Checked on the scores from before the batch (a counterparty's included)...
    const firings = evaluateTransactions(step.txs, alertsByAddress, {
      sides: step.sides,
      activity,
      counterparty: (address) => counterpartyRisk(address, labels, states),
      armedJudged,
      evaluatedAt: lookups.evaluatedAt,
      trailingSends: lookups.trailingSends,
      ownWallets: lookups.ownWallets,
    });
    const pending = scoreTouchedAddresses(activity, states, labelledCounterparties(step.txs, labels, tracked));
    for (const { address, next } of pending) {
      states.set(address, { address, balance: states.get(address)?.balance ?? 0, riskScore: next.score, riskFactors: next.factors });
    }
    // ...and notified with the wallet's score after it.
    for (const firing of firings) {
      const state = states.get(firing.alert.address);
      if (state) firing.risk = { score: state.riskScore, factors: state.riskFactors };
      txFirings.push(firing);
    }
    return { cause: `batch:${step.batchId}`, pending };
  });
  return { txFirings, scoreSteps, armedJudged };
}
