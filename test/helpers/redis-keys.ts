// Cleaning up under a key prefix on a shared Redis: used by tests and benchmarks alike.
import { Redis } from "ioredis";

/** Deletes every key under the prefix with SCAN + DEL (never FLUSHALL: the Redis is shared). */
export async function deletePrefixKeys(redis: Redis, prefix: string): Promise<number> {
  let cursor = "0";
  let deleted = 0;
  do {
    const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix}:*`, "COUNT", 1000);
    cursor = next;
    if (keys.length > 0) deleted += await redis.del(...keys);
  } while (cursor !== "0");
  return deleted;
}

/** The same on a connection of its own: for tests whose processes or proxies are gone by then. */
export async function deletePrefixKeysAt(url: string, prefix: string): Promise<number> {
  const redis = new Redis(url, { maxRetriesPerRequest: 1 });
  try {
    return await deletePrefixKeys(redis, prefix);
  } finally {
    redis.disconnect();
  }
}
