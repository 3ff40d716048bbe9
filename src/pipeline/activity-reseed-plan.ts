// What `npm run reseed-activity` rebuilds, decided without touching Redis or Postgres: the
// windows of history it reads, the groups it replays, which tracked addresses each replayed
// batch counts, and what the workers make of the "counters complete" key. Pure.
//
// Windows (the counters' own expiries, activity.lua):
// - the last 8 days of evaluated batches (by ingest time) are replayed through the counting
//   step itself: minute and hour buckets, the 7-day baseline (hours [H-169, H-2]), the 24-hour
//   sums, the dormancy record, and the counterparties and sends of those days, each step
//   judged as the evaluation judged it;
// - older than that, only what outlives a quiet week is written, straight from SQL: the
//   counterparties dealt with in the 100 days before (the newest COUNTERPARTIES_CAP of them),
//   and the newest send of the 3 years before (what a wake-up's silence is measured from),
//   each expiring when the live key would: counted from the address's last evaluation.
//   Replaying 100 days or 3 years of batches through the script would take hours on a busy
//   deployment for keys that hold only a set and a number.
import type { BatchTransaction } from "../db/queries/pipeline.ts";
import { ACTIVITY_TTL_SECONDS, COUNTERPARTIES_TTL_SECONDS, LAST_SEND_TTL_SECONDS, type AddressEvents } from "./activity.ts";
import { sidesByAddress } from "./batch-facts.ts";

export type ReseedWindows = {
  /** Evaluated batches ingested from here on are replayed through the counting step. */
  replayFrom: Date;
  /** Older batches ingested from here on give the counterparty sets. */
  counterpartiesFrom: Date;
  /** Older batches ingested from here on give the newest sends. */
  lastSendsFrom: Date;
};

export function reseedWindows(now: Date): ReseedWindows {
  const back = (seconds: number) => new Date(now.getTime() - seconds * 1000);
  return {
    replayFrom: back(ACTIVITY_TTL_SECONDS),
    counterpartiesFrom: back(COUNTERPARTIES_TTL_SECONDS),
    lastSendsFrom: back(LAST_SEND_TTL_SECONDS),
  };
}

/** An evaluated batch to replay. */
export type ReplayBatch = { id: string; transactionCount: number; evaluatedAt: Date };

/**
 * The batches (in the order they were counted) cut into groups of about `maxTransactions` (the last batch of a
 * group may cross it), like the evaluation's groups: one counting call per group.
 */
export function replayGroups<B extends { transactionCount: number }>(batches: readonly B[], maxTransactions: number): B[][] {
  const groups: B[][] = [];
  let current: B[] = [];
  let total = 0;
  for (const batch of batches) {
    current.push(batch);
    total += batch.transactionCount;
    if (total >= maxTransactions) {
      groups.push(current);
      current = [];
      total = 0;
    }
  }
  if (current.length > 0) groups.push(current);
  return groups;
}

/**
 * Each batch's events of the tracked addresses, batch by batch (the steps of one counting call).
 * Every evaluated batch counts, including those evaluated before the address was tracked: the
 * tracking seeds its counters from them (activity-seed.ts), and the evaluation counts the rest.
 */
export function replaySteps(
  batches: ReadonlyArray<{ id: string }>,
  txs: readonly BatchTransaction[],
  tracked: ReadonlySet<string>,
): AddressEvents[][] {
  const byBatch = new Map<string, BatchTransaction[]>(batches.map((batch) => [batch.id, []]));
  for (const tx of txs) byBatch.get(tx.batchId)?.push(tx);
  return batches.map((batch) => [...sidesByAddress(byBatch.get(batch.id)!, tracked).values()].map((side) => side.events));
}

/**
 * The expiry a rebuilt key gets: what is left of `ttlSeconds` counted from `lastCounted`, when
 * the last evaluation that counted its address ran (the counting script renews the live key's
 * expiry then, whatever the transactions' block times: back-filled history too); 0 when it
 * would have expired already (not written), never more than `ttlSeconds`.
 */
export function remainingTtl(lastCounted: number, ttlSeconds: number, nowSeconds: number): number {
  const left = ttlSeconds - Math.max(0, nowSeconds - lastCounted);
  return Math.max(0, Math.floor(left));
}
