// A setup file (vitest.config.ts): after a test file's own afterAll hooks, fails the file if
// keys are left on the shared Redis under a queue prefix it was given (uniqueQueuePrefix). A
// file that never cleaned up its prefix left a dozen BullMQ meta keys per full run, and no
// single file looked guilty; this names it. The keys stay, to be looked at.
import { Redis } from "ioredis";
import { afterAll } from "vitest";
import { issuedQueuePrefixes } from "./db.ts";
import { TEST_REDIS_URL } from "./env.ts";
import { prefixKeys } from "./redis-keys.ts";

// Registered before the file's own hooks, so it runs after them (after hooks run in reverse order).
afterAll(async () => {
  const prefixes = issuedQueuePrefixes();
  if (prefixes.length === 0) return;
  const redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 1 });
  try {
    const left = (await Promise.all(prefixes.map((prefix) => prefixKeys(redis, prefix, 10)))).flat();
    if (left.length > 0) {
      throw new Error(`keys left on the shared Redis under this file's queue prefixes (delete them in its cleanup, after whatever writes them is closed): ${left.join(", ")}`);
    }
  } finally {
    redis.disconnect();
  }
});
