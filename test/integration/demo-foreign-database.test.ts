// The demo's second guard: a database that holds wallets or alerts of callers other than the
// demo's own is not the demo's, whatever setting pointed it there. `npm run demo` refuses it
// with one line naming DEMO_DATABASE_URL, before it migrates, deletes or starts anything. It used
// to migrate it, replace its caller there, and start a worker whose reconciler delivered the
// service's owed notifications with the demo's settings.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import postgres from "postgres";
import { foreignDatabaseRefusal, otherCallersData } from "../../src/demo/database-guard.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { createTestDatabase, uniqueQueuePrefix } from "../helpers/db.ts";
import { TEST_REDIS_URL } from "../helpers/env.ts";
import { createAlert, track } from "../helpers/pipeline.ts";
import { freePort } from "../helpers/ports.ts";
import { deletePrefixKeysAt } from "../helpers/redis-keys.ts";
import { runDemoToExit } from "../helpers/demo-refusal.ts";

/** Start-up (tsx, on two shared cores); the refusal itself comes before anything is started. */
const EXIT_BOUND_MS = 60_000;
const prefix = uniqueQueuePrefix("demo-foreign-database");
let t: TestApp;

beforeAll(async () => {
  // The service's database: a caller other than the demo's, with a wallet and an alert.
  t = await startTestApp("demo-foreign-database");
  const token = await t.token("alice");
  const { walletId } = await track(t, token);
  await createAlert(t, token, { walletId, condition: "large_transfer", threshold: 1000 });
});
afterAll(async () => {
  await deletePrefixKeysAt(TEST_REDIS_URL, prefix);
  await t?.close();
});

const rowsOf = async (sql: postgres.Sql) =>
  sql<{ owner: string; wallets: number }[]>`select owner, count(*)::int as wallets from tracked_wallets group by owner order by owner`;

describe("the demo's check of its database", () => {
  it("finds other callers' wallets and alerts, and none in a database that has only the demo's or no tables yet", async () => {
    expect(await otherCallersData(t.deps.sql, "demo")).toEqual({ wallets: true, alerts: true });
    expect(await otherCallersData(t.deps.sql, "alice")).toEqual({ wallets: false, alerts: false });
    const empty = await createTestDatabase("demo-foreign-database-empty", { empty: true });
    const sql = postgres(empty.url, { max: 1, onnotice: () => {} });
    try {
      expect(await otherCallersData(sql, "demo")).toEqual({ wallets: false, alerts: false });
    } finally {
      await sql.end();
      await empty.drop();
    }
    expect(foreignDatabaseRefusal({ wallets: false, alerts: false }, { shownUrl: "x", setting: "DEMO_DATABASE_URL", caller: "demo" })).toBeUndefined();
  });

  it("words its way out without a host, which would be wrong in a container, and not as the database it refused", () => {
    const where = (shownUrl: string) => ({ shownUrl, setting: "DEMO_DATABASE_URL", caller: "demo" });
    const found = { wallets: true, alerts: false };
    const onDefault = foreignDatabaseRefusal(found, where("postgres://postgres:***@postgres:5432/wallet_alerts_demo"))!;
    expect(onDefault).toMatch(/e\.g\. the same URL with the database wallet_alerts_demo_2 in place of wallet_alerts_demo$/);
    expect(onDefault).not.toContain("127.0.0.1");
    expect(foreignDatabaseRefusal(found, where("postgres://app@db.internal/wallet_alerts"))).toMatch(
      /e\.g\. the same URL with the database wallet_alerts_demo in place of wallet_alerts$/,
    );
  });

  it("has npm run demo refuse the service's database with one line naming DEMO_DATABASE_URL, and leave it as it was", { timeout: EXIT_BOUND_MS + 30_000 }, async () => {
    const before = await rowsOf(t.deps.sql);
    const port = String(await freePort());
    const { exit, stdout, stderr } = await runDemoToExit({ databaseUrl: t.config.databaseUrl, port, queuePrefix: prefix }, EXIT_BOUND_MS);
    expect(exit, stdout + stderr).toEqual({ code: 1, signal: null });
    const name = new URL(t.config.databaseUrl).pathname.slice(1);
    expect(stderr).toBe(
      `demo failed: the database at ${t.config.databaseUrl} holds wallets and alerts of callers other than "demo": it is not the demo's ` +
        "(the demo migrates it and starts a worker that delivers whatever the database owes). " +
        "Give the demo a database of its own: set DEMO_DATABASE_URL to one that no service uses (the demo creates it when it does not exist), " +
        `e.g. the same URL with the database wallet_alerts_demo in place of ${name}\n`,
    );
    expect(stdout).not.toMatch(/started (api|worker)/);
    expect(await rowsOf(t.deps.sql)).toEqual(before);
  });
});
