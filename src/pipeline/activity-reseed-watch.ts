// Noticing that Redis lost the activity counters. A key under the queue prefix says the
// counters hold the evaluated history: written when nothing was evaluated yet (a new
// deployment: nothing to lose) and by `npm run reseed-activity` when it has rebuilt them,
// deleted by the reseed while it rebuilds. It has no expiry, so a Redis that lost it lost the
// counters with it (flushed, replaced, restarted without its append-only file): the key is
// gone while Postgres holds evaluated batches. An evaluation worker checks at start and then
// once a minute, on a timer (not per batch: no round trip is added to evaluation), logs one
// warning per loss it notices, naming the command, and shows it as a gauge.
//
// Written only in those two cases, never by counting: a worker that counts on after the loss
// must not hide it (the reseed rebuilds what it counted too).
import { Gauge, type Registry } from "prom-client";
import type { Redis } from "ioredis";
import type { Sql } from "../db/client.ts";
import type { Logger } from "../logger.ts";
import { METRIC_PREFIX } from "../metrics/registry.ts";
import { countersState, type CountersState } from "./activity-reseed-plan.ts";
import { anyBatchEvaluatedBefore } from "./activity-reseed-queries.ts";
import { withTimeout } from "../with-timeout.ts";

export const RESEED_COMMAND = "npm run reseed-activity";

/** The key that says the counters are complete: its value says who wrote it and when. */
export const countersCompleteKey = (prefix: string): string => `${prefix}:activity-complete`;

/** Marks the counters complete (`how`: "new deployment" or "reseeded"), unless the mark is there. */
export async function markCountersComplete(redis: Redis, prefix: string, how: string, now: Date): Promise<void> {
  await redis.set(countersCompleteKey(prefix), JSON.stringify({ how, at: now.toISOString() }), "NX");
}

/** Takes the mark away: the counters are being rebuilt, so they are not complete until that ends. */
export async function unmarkCountersComplete(redis: Redis, prefix: string): Promise<void> {
  await redis.del(countersCompleteKey(prefix));
}

export type CountersCheckDeps = { sql: Sql; redis: Redis; logger: Logger; config: { queuePrefix: string }; now: () => Date };

/**
 * Reads the mark and, when it is missing, whether Postgres holds batches evaluated before it was
 * read; marks a new deployment's counters. Only those count: a batch evaluated since was
 * counted into this very Redis (workers starting together on a new deployment: one marks and
 * evaluates while another, which read no mark, asks Postgres; or this worker's own, when its
 * first check outlasted the start's wait), and the mark read again settles it when another
 * worker wrote it meanwhile.
 */
export async function checkCounters(deps: CountersCheckDeps): Promise<CountersState> {
  const prefix = deps.config.queuePrefix;
  const key = countersCompleteKey(prefix);
  const readAt = deps.now();
  if ((await deps.redis.get(key)) !== null) return "complete";
  const state = countersState(null, await anyBatchEvaluatedBefore(deps.sql, readAt));
  if (state === "fresh") await markCountersComplete(deps.redis, prefix, "new deployment", deps.now());
  else if ((await deps.redis.get(key)) !== null) return "complete";
  return state;
}

export type CountersMonitor = {
  /** One check: the state seen (undefined when Redis or Postgres could not answer), warned of once per loss. */
  check: () => Promise<CountersState | undefined>;
};

/** The check, its one warning per loss and its gauge (when given a registry). */
export function createCountersMonitor(deps: CountersCheckDeps, options: { registry?: Registry } = {}): CountersMonitor {
  const gauge = options.registry
    ? new Gauge({
        name: `${METRIC_PREFIX}activity_counters_missing`,
        help: `1 when Redis has lost the activity counters (unusual_activity's baselines, the behavioural risk factors) while PostgreSQL holds evaluated batches: run ${RESEED_COMMAND}.`,
        registers: [options.registry],
      })
    : undefined;
  // One warning per loss: again only after the counters were seen complete in between.
  let warned = false;
  return {
    check: async () => {
      let state: CountersState;
      try {
        state = await checkCounters(deps);
      } catch (error) {
        deps.logger.debug({ err: error }, "activity counters: could not check whether Redis still holds them");
        return undefined;
      }
      gauge?.set(state === "missing" ? 1 : 0);
      if (state !== "missing") warned = false;
      else if (!warned) {
        warned = true;
        deps.logger.warn(
          { command: RESEED_COMMAND, key: countersCompleteKey(deps.config.queuePrefix) },
          `activity counters: Redis no longer holds them (PostgreSQL has evaluated batches, and the key that says the counters are complete is gone: a flushed or replaced Redis?). Until they are rebuilt, busy wallets' unusual_activity baselines fall to 1 transaction an hour and their behavioural risk factors miss their history. Stop the evaluation workers (those serving transactions) and run ${RESEED_COMMAND}`,
        );
      }
      return state;
    },
  };
}

export type CountersWatch = { stop: () => void };

const CHECK_EVERY_MS = 60_000;
const CHECK_TIMEOUT_MS = 2_000;

/**
 * Checks now (the start: resolves once the first check is done, so a new deployment is marked
 * before this worker evaluates anything) and every `everyMs` after. A check that fails (Redis
 * or Postgres away) is skipped: their own warnings say so.
 */
export async function watchActivityCounters(
  deps: CountersCheckDeps,
  options: { registry?: Registry; everyMs?: number } = {},
): Promise<CountersWatch> {
  const monitor = createCountersMonitor(deps, options);
  // Bounded: a start that waits for PostgreSQL must not wait for this too (the check goes on behind).
  await withTimeout(monitor.check, CHECK_TIMEOUT_MS, "the activity counters' check").catch(() => {});
  const timer = setInterval(() => void monitor.check(), options.everyMs ?? CHECK_EVERY_MS);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
