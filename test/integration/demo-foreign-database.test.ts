// The demo's second guard: a database that holds wallets or alerts of callers other than the
// demo's own is not the demo's, whatever setting pointed it there. `npm run demo` refuses it
// with one line naming DEMO_DATABASE_URL, before it migrates, deletes or starts anything. It used
// to migrate it, replace its caller there, and start a worker whose reconciler delivered the
// service's owed notifications with the demo's settings.
import { spawn } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fileURLToPath } from "node:url";
import postgres from "postgres";
import { foreignDatabaseRefusal, otherCallersData } from "../../src/demo/database-guard.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { createTestDatabase, uniqueQueuePrefix } from "../helpers/db.ts";
import { TEST_REDIS_URL } from "../helpers/env.ts";
import { createAlert, exited, track } from "../helpers/pipeline.ts";
import { freePort } from "../helpers/ports.ts";
import { deletePrefixKeysAt } from "../helpers/redis-keys.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
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

  it("has npm run demo refuse the service's database with one line naming DEMO_DATABASE_URL, and leave it as it was", { timeout: EXIT_BOUND_MS + 30_000 }, async () => {
    const before = await rowsOf(t.deps.sql);
    const port = String(await freePort());
    const demo = spawn(process.execPath, ["--import", "tsx", "src/bin/demo.ts"], {
      cwd: ROOT,
      env: {
        ...process.env,
        DEMO_DATABASE_URL: t.config.databaseUrl,
        DEMO_REDIS_URL: TEST_REDIS_URL,
        DEMO_PORT: port,
        DEMO_QUEUE_PREFIX: prefix,
        // The same for the service's settings: a demo that read them would meet the same database.
        DATABASE_URL: t.config.databaseUrl,
        REDIS_URL: TEST_REDIS_URL,
        PORT: port,
        QUEUE_PREFIX: prefix,
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    demo.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    demo.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const stillRunning = new Promise<"still running">((resolve) => setTimeout(() => resolve("still running"), EXIT_BOUND_MS).unref());
    const exit = await Promise.race([exited(demo), stillRunning]);
    if (exit === "still running") {
      demo.kill("SIGKILL");
      await exited(demo);
    }
    expect(exit, stdout + stderr).toEqual({ code: 1, signal: null });
    expect(stderr).toBe(
      `demo failed: the database at ${t.config.databaseUrl} holds wallets and alerts of callers other than "demo": it is not the demo's ` +
        "(the demo migrates it, replaces its caller's data, and its worker delivers whatever the database owes). " +
        "Give the demo a database of its own with DEMO_DATABASE_URL, e.g. DEMO_DATABASE_URL=postgres://postgres@127.0.0.1:5432/wallet_alerts_demo\n",
    );
    expect(stdout).not.toMatch(/started (api|worker)/);
    expect(await rowsOf(t.deps.sql)).toEqual(before);
  });
});
