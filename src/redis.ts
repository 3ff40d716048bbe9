import { Redis, type RedisOptions } from "ioredis";

// Two kinds of connection (BullMQ's advice): commands issued for an HTTP request must fail
// fast when Redis is down, so the API answers 503; blocking worker connections must wait
// for Redis to come back and never give up on a command.
export function createCommandRedis(url: string, options: RedisOptions = {}): Redis {
  return new Redis(url, { enableOfflineQueue: false, maxRetriesPerRequest: 1, connectTimeout: 2_000, ...options });
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
  return () => last;
}
