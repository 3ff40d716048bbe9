// Noticing that Redis lost the activity counters. A key under the queue prefix says the
// counters hold the evaluated history; it has no expiry, so a Redis that lost it lost the
// counters with it (flushed, replaced, restarted without its append-only file). The key holds a
// random token, and PostgreSQL, which outlives a Redis loss, records the same one
// (activity_counters_mark): a recorded token while the key is gone, or holds another one, is
// the loss. No recorded token: this deployment never had the key (a new one, or the first start
// after the upgrade that added it, when Redis still holds its counters): the check writes one
// token to both, and warns of nothing. `npm run reseed-activity` deletes the key while it rebuilds
// and writes a fresh token to both when it is done. An evaluation worker checks at start and then
// once a minute, on a timer (not per batch: no round trip is added to evaluation), logs one
// warning per loss it notices, naming the command, and shows it as a gauge.
//
// Written only in those two cases, never by counting: a worker that counts on after the loss
// must not hide it (the reseed rebuilds what it counted too).
import { randomUUID } from "node:crypto";
import { Gauge, type Registry } from "prom-client";
import type { Redis } from "ioredis";
import type { Sql } from "../db/client.ts";
import type { Logger } from "../logger.ts";
import { METRIC_PREFIX } from "../metrics/registry.ts";
import { readCountersMark, recordFirstCountersMark, replaceCountersMark, type CountersMark } from "./activity-reseed-queries.ts";
import { withTimeout } from "../with-timeout.ts";

export const RESEED_COMMAND = "npm run reseed-activity";

/** The key that says the counters are complete: its value holds the recorded token, and who wrote it and when. */
export const countersCompleteKey = (prefix: string): string => `${prefix}:activity-complete`;

/** Writes the recorded token to Redis (over a key of an earlier version, which held none). */
export async function publishCountersMark(redis: Redis, prefix: string, mark: CountersMark): Promise<void> {
  await redis.set(countersCompleteKey(prefix), JSON.stringify({ token: mark.token, how: mark.how, at: mark.setAt.toISOString() }));
}

/** The token a key's value holds, if any (an earlier version's key, or one set by hand, holds none). */
export function tokenIn(value: string | null): string | undefined {
  if (value === null) return undefined;
  try {
    const parsed: unknown = JSON.parse(value);
    const token = (parsed as { token?: unknown } | null)?.token;
    return typeof token === "string" ? token : undefined;
  } catch {
    return undefined;
  }
}

/** Marks the counters complete after a reseed: a fresh token, recorded and written to Redis. */
export async function markCountersReseeded(sql: Sql, redis: Redis, prefix: string, now: Date): Promise<void> {
  await replaceCountersMark(sql, { token: randomUUID(), how: "reseeded", setAt: now }, (mark) => publishCountersMark(redis, prefix, mark));
}

/** Takes the mark away: the counters are being rebuilt, so they are not complete until that ends. */
export async function unmarkCountersComplete(redis: Redis, prefix: string): Promise<void> {
  await redis.del(countersCompleteKey(prefix));
}

/**
 * What a check finds: `complete` (Redis's key holds Postgres's token), `fresh` (Postgres had no
 * token: a new deployment, or the first check after the upgrade that added it; one was written
 * to both now) or `missing` (Postgres has a token and Redis's key is gone or another: Redis lost
 * the counters).
 */
export type CountersState = "complete" | "fresh" | "missing";

export type CountersCheckDeps = { sql: Sql; redis: Redis; logger: Logger; config: { queuePrefix: string }; now: () => Date };

/**
 * "fresh" when this check wrote the first token (to both), "complete" when the key holds the
 * recorded token, "missing" when it does not. PostgreSQL is read first: a token is published to
 * Redis before the row that records it commits, so a key read after the row was seen holds it
 * unless Redis lost it since. Workers starting together need nothing more: one whose insert
 * meets another's waits for it and reads the token it published.
 */
export async function checkCounters(deps: CountersCheckDeps): Promise<CountersState> {
  const prefix = deps.config.queuePrefix;
  let recorded = await readCountersMark(deps.sql);
  if (recorded === undefined) {
    const first = await recordFirstCountersMark(deps.sql, { token: randomUUID(), how: "first check", setAt: deps.now() }, (mark) =>
      publishCountersMark(deps.redis, prefix, mark),
    );
    if (first.written) return "fresh";
    recorded = first.mark;
  }
  return tokenIn(await deps.redis.get(countersCompleteKey(prefix))) === recorded.token ? "complete" : "missing";
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
        help: `1 when Redis has lost the activity counters (unusual_activity's baselines, the behavioural risk factors): its key no longer holds the token PostgreSQL recorded. Run ${RESEED_COMMAND}.`,
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
          `activity counters: Redis no longer holds them (the key that says the counters are complete is gone, or does not hold the token PostgreSQL recorded: a flushed or replaced Redis?). Until they are rebuilt, busy wallets' unusual_activity baselines fall to 1 transaction an hour and their behavioural risk factors miss their history. Stop the evaluation workers (those serving transactions) and run ${RESEED_COMMAND}`,
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
 * Checks now (the start: resolves once the first check is done, so a deployment without a token
 * gets one before this worker evaluates anything) and every `everyMs` after. A check that fails (Redis
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
