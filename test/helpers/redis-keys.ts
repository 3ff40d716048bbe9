// Cleaning up under a key prefix on a shared Redis: used by tests and benchmarks alike.
import { Redis } from "ioredis";

/** The keys under the prefix, a SCAN page at a time (never KEYS: the Redis is shared). */
async function* scanPrefix(redis: Redis, prefix: string): AsyncGenerator<string[]> {
  let cursor = "0";
  do {
    const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix}:*`, "COUNT", 1000);
    cursor = next;
    if (keys.length > 0) yield keys;
  } while (cursor !== "0");
}

/** Deletes every key under the prefix with SCAN + DEL (never FLUSHALL: the Redis is shared). */
export async function deletePrefixKeys(redis: Redis, prefix: string): Promise<number> {
  let deleted = 0;
  for await (const keys of scanPrefix(redis, prefix)) deleted += await redis.del(...keys);
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

/** The keys under the prefix, at most `limit` of them. */
export async function prefixKeys(redis: Redis, prefix: string, limit = 100): Promise<string[]> {
  const found: string[] = [];
  for await (const keys of scanPrefix(redis, prefix)) {
    found.push(...keys);
    if (found.length >= limit) break;
  }
  return found.slice(0, limit);
}
