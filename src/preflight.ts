// Before a process starts its work: do PostgreSQL and Redis accept its settings? A wrong
// password, user or database name does not heal by waiting, nor (as a rule) a PostgreSQL whose
// connections are all taken (53300: processes × DATABASE_POOL_SIZE past max_connections or the
// role's CONNECTION LIMIT); the fatal line says which to change. Without this check a worker that
// Redis refused spun in BullMQ's retry loop at 100 % CPU, deaf to SIGTERM and silent after
// one warning, and an API answered every request with an error. A server that cannot be
// reached is another matter (it may be starting): the process goes on and waits for it.
import type { Redis } from "ioredis";
import type { Config } from "./config.ts";
import type { Sql } from "./db/client.ts";
import { isClusterRedirect, misconfiguredSetting, type Misconfiguration } from "./dependency-errors.ts";
import { databaseRefusalOf, refusedDatabase } from "./redis.ts";
import { withTimeout } from "./with-timeout.ts";

/** How long each server gets to answer before it counts as not reachable (yet). */
export const PREFLIGHT_TIMEOUT_MS = 5_000;

export type Reachability = "up" | "unreachable";
export type Preflight =
  | { refused: Misconfiguration }
  | {
      refused?: undefined;
      postgres: Reachability;
      redis: Reachability;
      /** Why Redis is "unreachable": the connection's last error, if it reported one (none: it never answered). */
      redisError?: unknown;
    };

type Outcome = Reachability | Misconfiguration;

/** Both checks at once; a refusal answers at once, without waiting for the other server. */
export async function preflight(
  deps: { sql: Sql; redis: Redis; config: Pick<Config, "queuePrefix"> },
  timeoutMs = PREFLIGHT_TIMEOUT_MS,
): Promise<Preflight> {
  let redisError: unknown;
  const probeKey = `${deps.config.queuePrefix}:preflight`;
  const checks = [checkPostgres(deps.sql, timeoutMs), checkRedis(deps.redis, probeKey, timeoutMs, (error) => (redisError = error))] as const;
  const firstRefusal = new Promise<Preflight>((resolve) => {
    for (const check of checks) void check.then((outcome) => typeof outcome === "object" && resolve({ refused: outcome }));
  });
  const both = Promise.all(checks).then(([postgres, redis]): Preflight => {
    if (typeof postgres === "object") return { refused: postgres };
    if (typeof redis === "object") return { refused: redis };
    return redis === "unreachable" && redisError !== undefined ? { postgres, redis, redisError } : { postgres, redis };
  });
  return Promise.race([firstRefusal, both]);
}

function checkPostgres(sql: Sql, timeoutMs: number): Promise<Outcome> {
  return withTimeout(() => sql`select 1`, timeoutMs, "PostgreSQL").then(
    (): Outcome => "up",
    (error: unknown): Outcome => misconfiguredSetting(error) ?? "unreachable",
  );
}

/**
 * Waits for the connection to be ready, PINGs it and reads a key of ours (clusterRedirect). Redis refuses a password in the
 * connection's handshake, so the refusal arrives as the connection's 'error' event (again on
 * every reconnect), never as a command's answer; so does its refusal of REDIS_URL's database
 * number, after which the connection would go ready on database 0 (src/redis.ts ends it instead).
 * Any other error is told to `onOtherError`: the reason Redis is not reachable.
 */
function checkRedis(redis: Redis, probeKey: string, timeoutMs: number, onOtherError: (error: unknown) => void): Promise<Outcome> {
  // Refused (and ended) before this check began listening.
  const refusedEarlier = databaseRefusalOf(redis);
  if (refusedEarlier) return Promise.resolve(refusedEarlier);
  return new Promise((resolve) => {
    const finish = (outcome: Outcome) => {
      clearTimeout(timer);
      redis.off("error", onError);
      redis.off("ready", onReady);
      resolve(outcome);
    };
    const onError = (error: unknown) => {
      const refused = misconfiguredSetting(error) ?? refusedDatabase(error);
      if (refused) finish(refused);
      else onOtherError(error);
    };
    const onReady = () => {
      // Both written at once, right behind each other: a command queued later would wait on
      // whatever else was sent meanwhile on this shared connection (BullMQ's own set-up).
      const pinged = redis.ping();
      const redirected = clusterRedirect(redis, probeKey);
      pinged.then(
        () => redirected.then((redirect) => finish(redirect ?? "up")),
        (error: unknown) => {
          const refused = misconfiguredSetting(error);
          if (!refused) onOtherError(error);
          finish(refused ?? "unreachable");
        },
      );
    };
    const timer = setTimeout(() => finish("unreachable"), timeoutMs);
    redis.on("error", onError);
    if (redis.status === "ready") onReady();
    else redis.once("ready", onReady);
  });
}

/**
 * A node of a Redis Cluster answers PING as any Redis does; only a command on a key shows it, with
 * MOVED (or ASK) when another node holds the key's slot: the standalone client we use cannot follow
 * that, and every job would fail alike (README: Redis Cluster is not supported). Any other answer
 * to this read is left to the readiness check.
 */
function clusterRedirect(redis: Redis, key: string): Promise<Misconfiguration | undefined> {
  return redis.exists(key).then(
    () => undefined,
    (error: unknown) => {
      const refused = misconfiguredSetting(error);
      return refused && isClusterRedirect(refused) ? refused : undefined;
    },
  );
}
