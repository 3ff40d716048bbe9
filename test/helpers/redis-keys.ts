// Cleaning up under a key prefix on a shared Redis: used by tests and benchmarks alike.
import type { Redis } from "ioredis";

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
