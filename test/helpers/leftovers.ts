// A setup file (vitest.config.ts): after a test file's own afterAll hooks, fails the file if it
// left behind what it made on the shared servers: keys under a queue prefix it was given
// (uniqueQueuePrefix), or a database it created (createTestDatabase). A file that never cleaned
// up its prefix left a dozen BullMQ meta keys per full run, and one whose cleanup stopped
// half-way left a database each run; no single file looked guilty. This names it. What is
// left stays, to be looked at.
import postgres from "postgres";
import { Redis } from "ioredis";
import { afterAll } from "vitest";
import { createdTestDatabases, issuedQueuePrefixes } from "./db.ts";
import { TEST_ADMIN_DATABASE_URL, TEST_REDIS_URL } from "./env.ts";
import { prefixKeys } from "./redis-keys.ts";

// Registered before the file's own hooks, so it runs after them (after hooks run in reverse order).
afterAll(async () => {
  const left = [...(await keysLeft()), ...(await databasesLeft())];
  if (left.length > 0) {
    throw new Error(`left on the shared servers by this file (remove them in its cleanup, after whatever writes them is closed): ${left.join(", ")}`);
  }
});

async function keysLeft(): Promise<string[]> {
  const prefixes = issuedQueuePrefixes();
  if (prefixes.length === 0) return [];
  const redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 1 });
  try {
    return (await Promise.all(prefixes.map((prefix) => prefixKeys(redis, prefix, 10)))).flat().map((key) => `Redis key ${key}`);
  } finally {
    redis.disconnect();
  }
}

async function databasesLeft(): Promise<string[]> {
  const names = createdTestDatabases();
  if (names.length === 0) return [];
  const admin = postgres(TEST_ADMIN_DATABASE_URL, { max: 1, onnotice: () => {} });
  try {
    const rows = await admin<{ datname: string }[]>`select datname from pg_database where datname = any(${names as string[]}::text[])`;
    return rows.map((row) => `database ${row.datname}`);
  } finally {
    await admin.end();
  }
}
