import { Redis, type RedisOptions } from "ioredis";
import type { Misconfiguration } from "./dependency-errors.ts";

// Two kinds of connection (BullMQ's advice): commands issued for an HTTP request must fail
// fast when Redis is down, so the API answers 503; blocking worker connections must wait
// for Redis to come back and never give up on a command.
export function createCommandRedis(url: string, options: RedisOptions = {}): Redis {
  const redis = new Redis(url, { enableOfflineQueue: false, maxRetriesPerRequest: 1, connectTimeout: 2_000, ...options });
  endOnRefusedDatabase(redis);
  return redis;
}

export function createWorkerRedis(url: string, options: RedisOptions = {}): Redis {
  return new Redis(url, { maxRetriesPerRequest: null, enableReadyCheck: false, ...options });
}

/** Resolves once the connection is ready, or false after timeoutMs (the caller decides if that is fatal). */
export function whenReady(redis: Redis, timeoutMs: number): Promise<boolean> {
  if (redis.status === "ready") return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      redis.off("ready", onReady);
      resolve(false);
    }, timeoutMs);
    const onReady = () => {
      clearTimeout(timer);
      resolve(true);
    };
    redis.once("ready", onReady);
  });
}

/**
 * The error the connection last reported, until it is ready again: why it is down. A command
 * on a connection that is not ready fails with ioredis's own words ("Stream isn't writeable"),
 * which do not say that Redis refused the password.
 */
export function trackConnectionError(redis: Redis): () => unknown {
  let last: unknown;
  redis.on("error", (error: unknown) => (last = error));
  redis.on("ready", () => (last = undefined));
  // A refused database ended the connection: that, not what failed after it ("Stream isn't writeable"), is why.
  return () => refusalErrors.get(redis) ?? last;
}

/**
 * Redis refused to switch the connection to REDIS_URL's database: ioredis sends SELECT <n> as it
 * connects, and when Redis answers `ERR DB index is out of range` (a number at or past the
 * server's `databases`), `ERR value is not an integer or out of range` or, from a Redis Cluster,
 * `ERR SELECT is not allowed in cluster mode`, it only emits an 'error' and goes ready on database
 * 0: a deployment kept apart from another by its database number then shared the other's queues,
 * without a word. Undefined for any other error.
 */
export function refusedDatabase(error: unknown): Misconfiguration | undefined {
  const { message, command } = (error ?? {}) as { message?: unknown; command?: { name?: unknown; args?: unknown[] } };
  if (command?.name !== "select" || typeof message !== "string") return undefined;
  const database = String(command.args?.[0] ?? "");
  const why = /cluster mode/i.test(message)
    ? "a Redis Cluster has database 0 only: remove the database number from REDIS_URL"
    : `REDIS_URL asks for database ${database}, past the server's \`databases\` setting: 16 by default, numbered 0 to 15`;
  return { setting: "REDIS_URL", service: "Redis", message: `${message} (${why})`, code: "ERR" };
}

const refusals = new WeakMap<Redis, Misconfiguration>();
const refusalErrors = new WeakMap<Redis, Error>();

/** The database refusal that ended this connection, if one did (for a check that starts later). */
export function databaseRefusalOf(redis: Redis): Misconfiguration | undefined {
  return refusals.get(redis);
}

/**
 * Ends a connection whose SELECT Redis refused instead of letting it serve database 0, and keeps
 * the refusal for the start-up check (src/preflight.ts), which may begin after it came (a worker
 * opens its metrics port first). Listening first, before any other listener is attached.
 */
function endOnRefusedDatabase(redis: Redis): void {
  redis.on("error", (error: unknown) => {
    const refused = refusedDatabase(error);
    if (!refused) return;
    refusals.set(redis, refused);
    refusalErrors.set(redis, new Error(`Redis refused REDIS_URL's database: ${refused.message}`));
    redis.disconnect();
  });
}

/** Redis's clock (TIME), in milliseconds: the one every process shares. */
export async function redisNowMs(redis: Redis): Promise<number> {
  const [seconds, microseconds] = await redis.time();
  return Number(seconds) * 1_000 + Math.floor(Number(microseconds) / 1_000);
}
