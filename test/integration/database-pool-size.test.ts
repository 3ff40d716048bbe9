// DATABASE_POOL_SIZE bounds the PostgreSQL connections of a process, built as the API and the
// worker build theirs (createDeps from the config): every process counts against the server's
// max_connections, so the operator sizes the pools against it. The pool used to be 10 whatever
// was set, and more API and worker processes than max_connections / 10 were refused (53300).
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.ts";
import { createDeps } from "../../src/deps.ts";
import { testEnv } from "../helpers/app.ts";
import { createTestDatabase, uniqueQueuePrefix } from "../helpers/db.ts";
import { TEST_ADMIN_DATABASE_URL } from "../helpers/env.ts";
import { deletePrefixKeysAt } from "../helpers/redis-keys.ts";

let database: Awaited<ReturnType<typeof createTestDatabase>>;
let admin: postgres.Sql;

beforeAll(async () => {
  database = await createTestDatabase("database-pool-size");
  admin = postgres(TEST_ADMIN_DATABASE_URL, { max: 1, onnotice: () => {} });
});
afterAll(async () => {
  await admin?.end();
  await database?.drop();
});

/** The app's sessions on the test database, counted from outside its pool. */
async function appConnections(): Promise<number> {
  const [row] = await admin<{ n: number }[]>`
    select count(*)::int as n from pg_stat_activity
    where datname = ${database.name} and application_name = 'wallet-alerts'`;
  return row!.n;
}

/** The most connections the process held while `queries` slow statements were all waiting to run. */
async function peakConnectionsFor(env: Record<string, string>, queries: number): Promise<number> {
  const config = loadConfig(testEnv({ DATABASE_URL: database.url, QUEUE_PREFIX: uniqueQueuePrefix("database-pool-size"), ...env }));
  const deps = createDeps(config);
  try {
    let done = false;
    const running = Promise.all(Array.from({ length: queries }, () => deps.sql`select pg_sleep(0.3)`)).finally(() => {
      done = true;
    });
    let peak = 0;
    while (!done) {
      peak = Math.max(peak, await appConnections());
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    // Every query ran: the ones beyond the pool waited for a connection, none was refused.
    expect(await running).toHaveLength(queries);
    return peak;
  } finally {
    await deps.close();
    // Its queues wrote their meta keys when they connected; deleted once nothing of it can write.
    await deletePrefixKeysAt(config.redisUrl, config.queuePrefix);
  }
}

describe("the PostgreSQL pool of a process", () => {
  it("opens no more connections than DATABASE_POOL_SIZE: the third of six concurrent queries waits for one of two", async () => {
    expect(await peakConnectionsFor({ DATABASE_POOL_SIZE: "2" }, 6)).toBe(2);
  });

  it("opens up to 10 connections when DATABASE_POOL_SIZE is not set", async () => {
    expect(await peakConnectionsFor({}, 12)).toBe(10);
  });
});
