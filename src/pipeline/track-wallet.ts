// Tracking an address (POST /v1/wallets), in one Postgres transaction. First, under the
// caller's own lock: whether the caller tracks the address already, or as many wallets as
// MAX_WALLETS_PER_CALLER allows (refused then, before the global locks: a refusal waits for
// no label import). Then, under the label lock (risk-labels.ts: label changes hold it shared,
// trackings take it exclusively, so they also run one at a time): the wallet row, and — when no
// other caller tracks the address already — what grows with its stored history: the label
// exposure of that whole history, and its activity counters seeded from it (activity-seed.ts).
// Last, under ingest's lock (address-counters.ts: every ingest holds it shared), the address's
// counters from its stored transactions and, for a first caller, its risk score from that
// exposure and the behaviour the seeded counters give. The service keeps no activity counters
// and no score for an untracked address (scoring.ts): counters left in Redis from an earlier
// period of tracking are deleted, since they miss what it did meanwhile (its first transaction
// would otherwise look like a reactivation after dormancy), and rebuilt from the stored history,
// so that a busy wallet is not judged on the floor baseline of 1/hour, nor its old payees as
// new. Its behavioural factors are what those counters give as they stand (as an evaluation of
// its last batch gave them), not none: an address that another caller tracks shows the factors
// its last batch gave, and a first caller who always saw none could tell the two apart (which
// addresses other desks watch). Only when Redis fails while seeding is it scored with none (its
// counters start from nothing too). A Redis that does not answer the seeding within its bound
// (seedingTimeoutMs) rolls the tracking back instead: see seedWithin.
//
// Why the history is read before ingest's lock. Under it, every ingest waits: reading and
// replaying a history of 500,000 transactions there held all ingest back for 2-5 s a tracking,
// and a caller tracking and deleting such an address in a loop cut everyone's ingest tenfold
// (a security review, 2026-11-28; now it waits 0.2-0.45 s, for the recount). The counters' recount must stay under it (an ingest in flight
// would escape it: address-counters.ts), and it reads every row of the address anyway; it also
// tells whether the rows read for the exposure are still all there is (markHistory, taken before
// that read): the rows settled then are compared, and the rows from the mark's cut on are read
// again, under the lock. Labels cannot change in between (the label lock), and nothing else
// scores an address that nobody tracks, so the exposure is the whole history's, as when it was
// read under the lock. The seeding reads the batches evaluated so far, as before; one evaluated
// after that read but before the commit, by an evaluation that began before it, is counted by
// neither (see the README's Reliability), and batches ingested meanwhile can now be among them.
import type { Deps } from "../deps.ts";
import { lockAddressCounters, markHistory, recountAddressActivity, sameRows } from "../db/queries/address-counters.ts";
import { labelExposure, lockLabelExposure } from "../db/queries/risk-labels.ts";
import { claimWalletSlot, insertWallet } from "../db/queries/wallets.ts";
import { TimedOut, withTimeout } from "../with-timeout.ts";
import { forgetAddressActivity, type AddressActivity } from "./activity.ts";
import { loadAddressSeed, writeAddressSeed, type AddressSeed } from "./activity-seed.ts";
import { rescoreExposure } from "./relabel.ts";

export const TRACKING_CAUSE = "tracking";

export type NewWallet = { id: string; owner: string; address: string; alias: string | null; tags: string[] };

export type TrackOutcome =
  | { kind: "tracked" }
  /** The caller tracks the address already; nothing was written. */
  | { kind: "already-tracked" }
  /** The caller tracks `limit` wallets already (MAX_WALLETS_PER_CALLER); nothing was written. */
  | { kind: "capped"; limit: number }
  /** Redis did not answer the seeding within seedingTimeoutMs; rolled back, nothing was written. */
  | { kind: "unavailable"; reason: string };

type TrackDeps = Pick<Deps, "sql" | "redis" | "logger" | "now"> & {
  config: Pick<Deps["config"], "queuePrefix" | "maxWalletsPerCaller" | "requestTimeoutMs">;
};

/**
 * How long the seeding's Redis work may take: half of REQUEST_TIMEOUT (5 s by default; a
 * seeding of the 20,000 rows replayed at most takes about 1.3 s). It runs holding the label lock,
 * so a label change or another tracking waiting behind it keeps the other half of its own
 * deadline, and the tracking answers its own 503 (nothing stored) before the deadline's (which
 * cannot say so). Ingests do not wait for it: ingest's lock is taken after it.
 */
export const seedingTimeoutMs = (config: Pick<Deps["config"], "requestTimeoutMs">): number => config.requestTimeoutMs / 2;

export async function trackWallet(deps: TrackDeps, wallet: NewWallet): Promise<TrackOutcome> {
  try {
    return await trackInTransaction(deps, wallet);
  } catch (error) {
    if (!(error instanceof TimedOut)) throw error;
    deps.logger.warn({ err: error, address: wallet.address }, "tracking: Redis did not answer the seeding of the activity counters in time; rolled back");
    return { kind: "unavailable", reason: `the activity counters could not be seeded: ${error.message}` };
  }
}

function trackInTransaction(deps: TrackDeps, wallet: NewWallet): Promise<TrackOutcome> {
  return deps.sql.begin(async (tx): Promise<TrackOutcome> => {
    const slot = await claimWalletSlot(tx, wallet.owner, wallet.address, deps.config.maxWalletsPerCaller);
    if (slot.kind !== "free") return slot;
    // Waiting for a label import here holds no ingest back: ingest's lock comes last.
    await lockLabelExposure(tx);
    const inserted = await insertWallet(tx, wallet);
    if (!inserted) return { kind: "already-tracked" };
    if (inserted.trackedBefore) {
      await lockAddressCounters(tx);
      await recountAddressActivity(tx, wallet.address);
      return { kind: "tracked" };
    }
    const { address } = wallet;
    const now = deps.now();
    // Ingests go on meanwhile. The mark first: the exposure read after it sees at least its rows.
    const mark = await markHistory(tx, address);
    const exposure = await labelExposure(tx, [address]);
    // Before the commit: an evaluation that counts the address starts after it and finds the seeded keys.
    const seeded = await seedWithin(deps, address, await loadAddressSeed(tx, address, wallet.id, now));
    // Scored on its counters as they stand; on none when they could not be seeded (they start from nothing).
    const behaviour = seeded.kind === "unseeded" ? "cleared" : { counted: new Map(seeded.activity ? [[address, seeded.activity]] : []) };

    await lockAddressCounters(tx);
    const settled = await recountAddressActivity(tx, address, mark.before);
    // The settled rows unchanged, only the newer ones are read again; else (a back-fill or a prune meanwhile) all of them.
    const whole = sameRows(settled, mark) ? [...exposure, ...(await labelExposure(tx, [address], mark.before))] : await labelExposure(tx, [address]);
    // No alert can be owed this change: alerts belong to wallets, and none tracked the address.
    await rescoreExposure(tx, [address], { behaviour, cause: TRACKING_CAUSE, evaluatedAt: now, exposure: whole });
    return { kind: "tracked" };
  });
}

/** Seeded: the activity its counters now hold (null: none in the replayed days). Unseeded: Redis failed. */
type SeedOutcome = { kind: "seeded"; activity: AddressActivity | null } | { kind: "unseeded" };

/**
 * seedCounters, given up with TimedOut at seedingTimeoutMs: the tracking then rolls back and
 * lets its locks go. A Redis that stops answering raises no error, and unbounded the seeding
 * waited for ever, holding back every label change and tracking (and, while it ran under
 * ingest's lock, until 2026-11-28, every ingest of every API process). Not tracked
 * unseeded, as after a Redis error: the commands sent may still land whenever Redis answers
 * again, among the counting of the address's next batches, and a late delete or replay would
 * corrupt the counters of a tracked address; an untracked one's keys are read by nobody, and
 * its next tracking deletes them first. The seeding stops at its next step (the abort): a
 * seeding that went on once Redis answered would delete and rewrite keys under a later one.
 */
async function seedWithin(deps: TrackDeps, address: string, seed: AddressSeed): Promise<SeedOutcome> {
  const stop = new AbortController();
  try {
    return await withTimeout(() => seedCounters(deps, address, seed, stop.signal), seedingTimeoutMs(deps.config), "Redis");
  } catch (error) {
    stop.abort();
    throw error;
  }
}

/**
 * Deletes the address's counters and writes the seed. Redis failing is no reason to refuse the
 * tracking: the wallet then starts on the floor baseline, as it did before seeding existed (its
 * counters deleted again, as far as Redis lets: a seeding cut short is partial), with no
 * behavioural factors (whatever the counting answered before the failure, the keys do not hold it).
 * Once `stopped` (given up: the tracking rolled back), it sends nothing more for the address.
 */
async function seedCounters(deps: TrackDeps, address: string, seed: AddressSeed, stopped: AbortSignal): Promise<SeedOutcome> {
  const { redis, logger } = deps;
  const prefix = deps.config.queuePrefix;
  try {
    await forgetAddressActivity(redis, prefix, address);
  } catch (error) {
    if (!stopped.aborted) logger.warn({ err: error, address }, "tracking: could not delete stale activity counters");
    return { kind: "unseeded" };
  }
  try {
    return { kind: "seeded", activity: (await writeAddressSeed(redis, prefix, seed, stopped)).activity };
  } catch (error) {
    if (stopped.aborted) return { kind: "unseeded" };
    logger.warn({ err: error, address }, "tracking: could not seed the activity counters from the stored history");
    await forgetAddressActivity(redis, prefix, address).catch(() => {});
    return { kind: "unseeded" };
  }
}
