// npm run reseed-activity: rebuilds the tracked addresses' activity counters from Postgres
// after Redis lost them, without firing anything.
//
// It rebuilds from nothing, so that the result is the same however often it runs: the
// tracked addresses' keys are deleted, the older history that outlives a quiet week is
// written from SQL (activity-reseed-history.ts), then the evaluated batches of the last 8
// days are replayed in the order the evaluation counted them (activity-reseed-queries.ts), in
// groups, through the counting step itself (applyActivityInOrder: the script the evaluation
// runs, each batch a step counted on what the batches before it left). Each group's "counted"
// markers are deleted before it is replayed (so that markers a lost evaluation or an
// interrupted reseed left behind cannot make it skip events) and after (the batches are evaluated: nothing counts them again). A second run, or a
// run after one was interrupted, deletes and rebuilds again: nothing is ever counted twice. The
// answers are thrown away: nothing is scored, recorded or fired. A tracked address counts in
// every replayed batch, whether or not it was tracked when the batch was evaluated: tracking
// seeds its counters from the history before it (activity-seed.ts), the evaluation counts the rest.
//
// The evaluation workers must be stopped: what they count meanwhile would be deleted or counted
// out of order. The command refuses while a worker serving `transactions` is connected to Redis
// (BullMQ names its connections: CLIENT LIST), looks again at the end (a worker started
// meanwhile: it fails, leaving the counters marked incomplete), and two reseeds never run at
// once (a lock key, renewed on a timer while the process lives: one step, such as a busy
// deployment's history query, may take longer than the lock lives). The open batches' markers
// are deleted too: their counts went with the counters, and the evaluation that claims them
// counts them afresh.
import type { Redis } from "ioredis";
import type { Deps } from "../deps.ts";
import { randomUUID } from "node:crypto";
import { loadBatchTransactions } from "../db/queries/pipeline.ts";
import { QUEUES } from "../queue/names.ts";
import { activityKeys, applyActivityInOrder, forgetCountedBatches } from "./activity.ts";
import { seedOlderHistory, type SeededHistory } from "./activity-reseed-history.ts";
import { replayGroups, replaySteps, reseedWindows } from "./activity-reseed-plan.ts";
import { evaluatedBatchesFrom, loadTrackedAddresses, openBatchIds } from "./activity-reseed-queries.ts";
import { markCountersReseeded, unmarkCountersComplete } from "./activity-reseed-watch.ts";

/** The reseed will not start (or not finish): the message says why and what to do. */
export class ReseedRefused extends Error {}

export type ReseedDeps = Pick<Deps, "sql" | "redis" | "queues" | "now"> & {
  config: Pick<Deps["config"], "queuePrefix" | "evaluationGroupTransactions">;
};

export type ReseedOptions = {
  /** The operator has stopped the evaluation workers (for a Redis that refuses CLIENT LIST, where the check cannot look). */
  workersStopped?: boolean;
  /** One line per step and per replayed group. */
  progress?: (line: string) => void;
  /** How long the lock lives unless renewed (it is renewed at a third of that): a process that dies holds it no longer. */
  lockMs?: number;
};

export type ReseedSummary = SeededHistory & {
  trackedAddresses: number;
  /** Tracked addresses that the replayed batches counted. */
  countedAddresses: number;
  batches: number;
  transactions: number;
  /** Activity events counted (one per address and chain transaction). */
  events: number;
};

/** Batches per page of the cursor, and keys or markers per deletion. */
const PAGE = 1_000;
const LOCK_MS = 120_000;

export async function reseedActivity(deps: ReseedDeps, options: ReseedOptions = {}): Promise<ReseedSummary> {
  const progress = options.progress ?? (() => {});
  const { redis, sql } = deps;
  const prefix = deps.config.queuePrefix;
  await refuseBesideWorkers(deps, options, "is connected to Redis: stop the workers that serve transactions first, then run it again");
  const lock = await takeLock(redis, prefix, options.lockMs ?? LOCK_MS);
  try {
    const now = deps.now();
    const windows = reseedWindows(now);
    // Incomplete from here until the end: an interrupted run leaves the workers' warning on.
    await unmarkCountersComplete(redis, prefix);
    const tracked = await loadTrackedAddresses(sql);
    const trackedSet = new Set(tracked);
    for (let i = 0; i < tracked.length; i += PAGE) {
      await redis.unlink(...tracked.slice(i, i + PAGE).flatMap((address) => Object.values(activityKeys(prefix, address))));
    }
    progress(`deleted the activity keys of ${tracked.length} tracked addresses`);
    const open = await openBatchIds(sql);
    for (let i = 0; i < open.length; i += PAGE) await forgetCountedBatches(redis, prefix, open.slice(i, i + PAGE));
    if (open.length > 0) progress(`reset the counting markers of ${open.length} batches not evaluated yet`);

    const history = await seedOlderHistory(deps, tracked, windows, now, async () => lock.check());
    progress(
      `older history (ingested ${windows.counterpartiesFrom.toISOString()} to ${windows.replayFrom.toISOString()} for counterparties, ` +
        `from ${windows.lastSendsFrom.toISOString()} for sends): ${history.counterpartySets} counterparty sets, ${history.lastSends} newest sends`,
    );

    const counted = new Set<string>();
    let batches = 0;
    let transactions = 0;
    let events = 0;
    for await (const page of evaluatedBatchesFrom(sql, windows.replayFrom, PAGE)) {
      for (const group of replayGroups(page, deps.config.evaluationGroupTransactions)) {
        const batchIds = group.map((batch) => batch.id);
        const txs = await loadBatchTransactions(sql, batchIds);
        const steps = replaySteps(group, txs, trackedSet);
        await forgetCountedBatches(redis, prefix, batchIds);
        await applyActivityInOrder(redis, prefix, steps);
        await forgetCountedBatches(redis, prefix, batchIds);
        for (const step of steps) {
          for (const input of step) {
            counted.add(input.address);
            events += input.events.length;
          }
        }
        batches += group.length;
        transactions += txs.length;
        lock.check();
        progress(`replayed ${batches} batches, ${transactions} transactions (${counted.size} tracked addresses counted)`);
      }
    }
    await refuseBesideWorkers(
      deps,
      options,
      "started during the reseed, and what it counted may be lost or counted out of order: keep the workers stopped and run it again",
    );
    lock.check();
    // A fresh token, recorded in PostgreSQL and written to the key: the workers see it complete.
    await markCountersReseeded(sql, redis, prefix, deps.now());
    return { trackedAddresses: tracked.length, countedAddresses: counted.size, batches, transactions, events, ...history };
  } finally {
    await lock.release();
  }
}

/** Refuses while a worker of the `transactions` queue is connected (unless the operator vouches that none runs). */
async function refuseBesideWorkers(deps: ReseedDeps, options: ReseedOptions, what: string): Promise<void> {
  if (options.workersStopped) return;
  const cannotTell = (why: string) =>
    new ReseedRefused(
      `cannot tell whether evaluation workers are running (${why}): stop the workers that serve transactions, then run it again with --workers-stopped`,
    );
  let workers;
  try {
    workers = await deps.queues[QUEUES.transactions].getWorkers();
  } catch (error) {
    // An ACL that denies CLIENT LIST (managed services' restricted users): BullMQ passes its refusal on.
    if (/^NOPERM\b/.test((error as Error).message)) throw cannotTell(`this Redis refuses CLIENT LIST: ${(error as Error).message}`);
    throw error;
  }
  // BullMQ's stand-in when Redis does not know CLIENT (some managed services): nothing to go by.
  if (workers.some((worker) => worker.name === "GCP does not support client list")) throw cannotTell("this Redis refuses CLIENT LIST");
  if (workers.length > 0) throw new ReseedRefused(`an evaluation worker (queue transactions, ${workers.length} connection(s)) ${what}`);
}

type Lock = {
  /** Throws when the lock was lost (Redis flushed, or the process stalled for the lock's lifetime): the run must not go on. */
  check: () => void;
  release: () => Promise<void>;
};

const RENEW = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end return 0`;
const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;

/**
 * One reseed at a time: a key held while it runs, renewed on a timer (not after each step: a
 * step slower than the lock's lifetime lost it), so that it lapses only when the process dies
 * or stalls. A renewal that finds the key gone or taken marks the lock lost; the run checks
 * between steps.
 */
async function takeLock(redis: Redis, prefix: string, lockMs: number): Promise<Lock> {
  const key = `${prefix}:activity-reseeding`;
  const token = randomUUID();
  const seconds = Math.round(lockMs / 1000);
  if ((await redis.set(key, token, "PX", lockMs, "NX")) === null) {
    throw new ReseedRefused(`another reseed of the activity counters is under way (or one died less than ${seconds} s ago): wait for it, then run it again`);
  }
  let lost = false;
  // When the last renewal that Redis confirmed was sent: a stalled process finds its lock lapsed on waking, before Redis says so.
  let renewedAt = Date.now();
  const renew = async () => {
    const sentAt = Date.now();
    // A renewal Redis did not answer is not a loss: the next one tries again, and the lock lasts three of them.
    const renewed = await redis.eval(RENEW, 1, key, token, String(lockMs)).catch(() => undefined);
    if (renewed === 0) lost = true;
    else if (renewed === 1) renewedAt = sentAt;
  };
  const timer = setInterval(() => void renew(), lockMs / 3);
  timer.unref();
  return {
    check: () => {
      if (lost || Date.now() - renewedAt >= lockMs) throw new ReseedRefused(`the reseed lost its lock (Redis flushed, or the process stalled for ${seconds} s): run it again`);
    },
    release: async () => {
      clearInterval(timer);
      await redis.eval(RELEASE, 1, key, token).catch(() => {});
    },
  };
}
