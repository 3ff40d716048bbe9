// Seeding the activity counters of an address that becomes tracked (trackWallet, by its first
// caller) from its stored history, as `npm run reseed-activity` rebuilds them for every tracked
// address: a busy wallet is then judged on its own week, not on the floor baseline of 1/hour
// (unusual_activity fired on its first busy hour), and the payees it paid before are not new
// (new_counterparty_burst saw every one of them as new).
//
// In two parts, so that the tracking can tell Postgres failing (the tracking fails) from Redis
// failing (it goes on, unseeded): what to write is read from SQL (loadAddressSeed), then written
// into the address's keys, deleted beforehand (writeAddressSeed): the history older than the
// replayed days as the reseed writes it (activity-reseed-history.ts), then the address's rows of
// the batches evaluated in the last 8 days replayed through the counting script in the order
// the evaluation counted them (activity-reseed-plan.ts). Both run inside the tracking
// transaction, before the commit: the first evaluation that counts the address starts after the
// commit and finds the seeded state; the batches not evaluated yet are left to it.
//
// The replay goes under batch ids of this seeding's own (`seed:<walletId>:<call>`, one per
// script call): the script's "counted" markers and stored answers are per batch id, and the live
// workers' (of batches they may be evaluating right now, for other addresses) must not be
// touched. Its markers are deleted afterwards. Nothing fires from the answers; the last one is
// the address's activity as its counters now hold it (at its newest transaction counted, as the
// evaluation of its last batch answered), which the tracking scores its behaviour on.
//
// The tracking transaction holds the label lock meanwhile (label changes and other trackings
// wait; ingests do not: track-wallet.ts), and its caller waits for the answer, so what is
// replayed is capped at the address's newest SEED_REPLAY_CAP rows (see the README's Risk score),
// and the writing is given up at a bound (track-wallet.ts: a Redis that stops answering).
import type { Redis } from "ioredis";
import type { TransactionSql } from "postgres";
import type { Sql } from "../db/client.ts";
import { applyActivityInOrder, forgetCountedBatches, type AddressActivity, type AddressEvents } from "./activity.ts";
import { loadOlderHistory, writeOlderHistory, type OlderHistory, type SeededHistory } from "./activity-reseed-history.ts";
import { replayGroups, replaySteps, reseedWindows } from "./activity-reseed-plan.ts";
import { loadAddressReplayRows } from "./activity-seed-queries.ts";

/**
 * The most of an address's rows that a tracking replays: the newest ones. Measured on a shared
 * 2-core host, for an address with 50,000 rows in the replayed days: all of them took 0.7–0.9 s
 * in batches of 10 or 100 of them, 1.5–3 s in batches of one each (each batch is a step of its
 * own); the newest 20,000, 0.6–0.7 s and 1.2–1.3 s (about half of that reading its rows, which
 * the cap does not shorten: the newest in counting order are found by sorting them all).
 */
export const SEED_REPLAY_CAP = 20_000;

/** Rows per script call: one long call would hold every other Redis client back. */
const ROWS_PER_CALL = 5_000;

/** What seeding an address writes: read from SQL, before Redis is touched. */
export type AddressSeed = {
  address: string;
  older: OlderHistory;
  /** The replay's script calls, in counting order: each one's steps (a batch each), under a batch id of the call's own. */
  calls: Array<{ batchId: string; steps: AddressEvents[][] }>;
  /** Batches and rows of the address replayed. */
  batches: number;
  transactions: number;
  /** The replayed days held more of its rows than SEED_REPLAY_CAP: the oldest were left out. */
  capped: boolean;
  now: Date;
};

export type SeedSummary = SeededHistory & {
  batches: number;
  transactions: number;
  capped: boolean;
  /** What the counting answered for the address at the replay's last step; null when nothing was replayed (no activity in the replayed days). */
  activity: AddressActivity | null;
};

/**
 * Reads what seeding the address writes: its history evaluated before `now` (in this
 * transaction's view: the batches not evaluated yet are left to the evaluation). `seedId` is
 * unique to this seeding (the new wallet's id): its markers are its own.
 */
export async function loadAddressSeed(sql: Sql | TransactionSql, address: string, seedId: string, now: Date): Promise<AddressSeed> {
  const windows = reseedWindows(now);
  const older = await loadOlderHistory(sql, [address], windows);
  const rows = await loadAddressReplayRows(sql, address, windows.replayFrom, SEED_REPLAY_CAP + 1);
  const capped = rows.length > SEED_REPLAY_CAP;
  // The cap may have cut the oldest batch: it is left out whole, unless it is the only one.
  const whole = capped ? rows.filter((tx) => tx.batchId !== rows[0]!.batchId) : rows;
  const txs = whole.length > 0 ? whole : rows.slice(1);
  // The rows come in counting order, a batch's side by side.
  const rowCounts = new Map<string, number>();
  for (const tx of txs) rowCounts.set(tx.batchId, (rowCounts.get(tx.batchId) ?? 0) + 1);
  const batches = [...rowCounts].map(([id, transactionCount]) => ({ id, transactionCount }));
  const steps = replaySteps(batches, txs, new Set([address]));
  const calls: AddressSeed["calls"] = [];
  let next = 0;
  for (const group of replayGroups(batches, ROWS_PER_CALL)) {
    // One marker per call, not per batch: the script sets a call's markers before it counts
    // anything, so every step of the call counts, and a busy wallet's thousands of one-row
    // batches cost no thousands of marker keys.
    const batchId = seedBatchId(seedId, calls.length);
    const own = steps.slice(next, (next += group.length));
    const renamed = (input: AddressEvents): AddressEvents => ({ ...input, events: input.events.map((event) => ({ ...event, batchId })) });
    calls.push({ batchId, steps: own.map((inputs) => inputs.map(renamed)) });
  }
  return { address, older, calls, batches: batches.length, transactions: txs.length, capped, now };
}

/**
 * Writes the seed into the address's keys (deleted beforehand), then deletes the replay's
 * markers. Throws when any of it fails (the keys then hold part of it), and once `stopped`:
 * a seeding given up sends no more of it (only the deletion of its own markers).
 */
export async function writeAddressSeed(redis: Redis, prefix: string, seed: AddressSeed, stopped?: AbortSignal): Promise<SeedSummary> {
  stopped?.throwIfAborted();
  const history = await writeOlderHistory(redis, prefix, seed.older, seed.now);
  let activity: AddressActivity | null = null;
  try {
    for (const call of seed.calls) {
      stopped?.throwIfAborted();
      const answers = await applyActivityInOrder(redis, prefix, call.steps);
      activity = answers.at(-1)?.get(seed.address) ?? activity;
    }
  } finally {
    await forgetCountedBatches(redis, prefix, seed.calls.map((call) => call.batchId));
  }
  return { ...history, batches: seed.batches, transactions: seed.transactions, capped: seed.capped, activity };
}

/** The replay's k-th call's batch id: its "counted" markers and answers are the seeding's own, never the workers'. */
export const seedBatchId = (seedId: string, call: number): string => `seed:${seedId}:${call}`;
