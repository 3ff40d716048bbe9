// The facts of a batch, arranged per address: each address's events for the activity
// counters, the labels of the counterparties it dealt with (every source's), and what is known
// of every counterparty. Pure: the rows come in, maps go out.
import type { AddressLabels, AddressStateRow, BatchTransaction, LabelRow } from "../db/queries/pipeline.ts";
import type { CounterpartyRisk } from "../domain/conditions/index.ts";
import { addSol, dealingOf, type Dealing } from "../domain/risk/index.ts";
import { isSol } from "../domain/tokens.ts";
import type { Transaction, TransactionType } from "../domain/types.ts";
import type { ActivityEvent, AddressEvents } from "./activity.ts";


/**
 * The types whose SOL leaves the wallet's hands, for large_outflow (a drain). Staked SOL stays
 * the wallet's, and a swap pays for what it receives in the same transaction: counting either
 * raised a trading desk's score (and its risk_score_increase alerts) for moving its own funds.
 */
const OUTFLOW_TYPES: ReadonlySet<TransactionType> = new Set(["transfer", "nft", "other"]);

/**
 * Per address, the rows of the batch it is on (`txIndexes`, in chain order) and its activity
 * events: one per chain transaction, however many of its legs the address is on (a
 * self-transfer counts once), so `eventIndexes[k]` is the event of row `txIndexes[k]`.
 */
export type AddressSides = { events: AddressEvents; txIndexes: number[]; eventIndexes: number[] };

/** Every address on either side, each once, in the order they first appear. */
export function touchedAddresses(txs: readonly Transaction[]): string[] {
  const seen = new Set<string>();
  for (const tx of txs) {
    seen.add(tx.from);
    seen.add(tx.to);
  }
  return [...seen];
}

/**
 * The addresses of `counted` on either side, each once, with their events (needWindows off:
 * the caller turns it on). Only tracked addresses are counted, so no others are built. A
 * transaction's legs are side by side in chain order, so an address's legs of one signature
 * are merged into the event before.
 */
export function sidesByAddress(txs: readonly BatchTransaction[], counted: ReadonlySet<string>): Map<string, AddressSides> {
  const sides = new Map<string, AddressSides>();
  // Per address, the signature of its newest event: the next leg of it merges into that event.
  const lastSignature = new Map<string, string>();
  txs.forEach((tx, index) => {
    for (const address of tx.from === tx.to ? [tx.from] : [tx.from, tx.to]) {
      if (!counted.has(address)) continue;
      let entry = sides.get(address);
      if (!entry) {
        entry = { events: { address, needWindows: false, events: [] }, txIndexes: [], eventIndexes: [] };
        sides.set(address, entry);
      }
      const sent = tx.from === address && tx.to !== address;
      // A failed self-transfer is the address's own failed attempt too: a failed Helius item
      // moves nothing and is stored from its fee payer to itself.
      const failedSent = tx.from === address && tx.status === "failed";
      // Its own transaction (a self-transfer too): only these end a silence (dormant_reactivation).
      const ownSend = tx.from === address;
      const solSent = sent && tx.status === "success" && isSol(tx) && OUTFLOW_TYPES.has(tx.type) ? tx.amount : 0;
      const dealing = dealingOf(address, tx);
      const events = entry.events.events;
      let event = events[events.length - 1];
      if (event && lastSignature.get(address) === tx.signature) {
        event.failedSent ||= failedSent;
        event.sent ||= ownSend;
        // To the lamport: a payout of many legs summed as doubles drifts off its exact total.
        event.solSent = addSol(event.solSent, solSent);
      } else {
        event = { batchId: tx.batchId, blockTime: tx.blockTime, sent: ownSend, failedSent, solSent, sentTo: [], receivedFrom: [] };
        events.push(event);
        lastSignature.set(address, tx.signature);
      }
      if (dealing !== null) addDealing(event, dealing);
      entry.txIndexes.push(index);
      entry.eventIndexes.push(events.length - 1);
    }
  });
  return sides;
}

/**
 * Adds a leg's other side to its transaction's event, once: among those sent to when any leg of
 * the transaction sent to it (only those can be new counterparties; see dealings.ts).
 */
function addDealing(event: ActivityEvent, { counterparty, sentTo }: Dealing): void {
  if (event.sentTo.includes(counterparty)) return;
  const received = event.receivedFrom.indexOf(counterparty);
  if (!sentTo) {
    if (received < 0) event.receivedFrom.push(counterparty);
    return;
  }
  if (received >= 0) event.receivedFrom.splice(received, 1);
  event.sentTo.push(counterparty);
}

/**
 * Per address of `scored`, the labels of the counterparties it dealt with in the batch: every
 * label of each (every source's: each counts for the score), each counterparty once.
 */
export function labelledCounterparties(
  txs: readonly Transaction[],
  labels: ReadonlyMap<string, AddressLabels>,
  scored: ReadonlySet<string>,
): Map<string, LabelRow[]> {
  const byAddress = new Map<string, LabelRow[]>();
  if (labels.size === 0) return byAddress;
  // Per address, the labelled counterparties already added (a wallet that pays one several times in a batch).
  const added = new Map<string, Set<string>>();
  const add = (address: string, counterparty: string) => {
    if (!scored.has(address)) return;
    const labelled = labels.get(counterparty);
    if (!labelled) return;
    const seen = added.get(address);
    if (seen?.has(counterparty)) return;
    if (seen) seen.add(counterparty);
    else added.set(address, new Set([counterparty]));
    const list = byAddress.get(address);
    if (list) list.push(...labelled.labels);
    else byAddress.set(address, [...labelled.labels]);
  };
  for (const tx of txs) {
    if (tx.from === tx.to) continue;
    add(tx.from, tx.to);
    add(tx.to, tx.from);
  }
  return byAddress;
}

/**
 * What is known of an address as a counterparty: its effective label (the highest score of its
 * labels, with that label's category: loadLabels puts it first), and its score when the service
 * keeps one (`trackedStates` holds the tracked addresses' rows only: see scoring.ts).
 */
export function counterpartyRisk(
  address: string,
  labels: ReadonlyMap<string, AddressLabels>,
  trackedStates: ReadonlyMap<string, AddressStateRow>,
): CounterpartyRisk {
  const all = labels.get(address)?.labels ?? [];
  const label = all[0];
  const state = trackedStates.get(address);
  return {
    address,
    labelScore: label?.score ?? null,
    labelCategory: label?.category ?? null,
    riskScore: state ? state.riskScore : null,
    // Every source's, for the notification (the source is what a compliance desk cites). This
    // runs for every transaction evaluated, and most counterparties have no label: they share
    // one empty list rather than each making its own.
    labels: all.length === 0 ? NO_LABELS : all.map(({ category, score, source }) => ({ category, score, source })),
  };
}

const NO_LABELS: NonNullable<CounterpartyRisk["labels"]> = [];
