// A PostgreSQL restart, a failover or an operator's pg_terminate_backend ends the server side of
// connections that are inside a transaction. postgres.js 3.4.9 then threw from a setImmediate
// (connection.js nextWrite, on a socket it had set to null), where no caller can catch it: the
// API or the worker exited with code 1 (porsager/postgres#1154, #1208; patched in
// patches/postgres+3.4.9.patch). Here real processes wait on a lock, their backend is
// terminated, and each answers or goes on, still running.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, testEnv, type TestApp } from "../helpers/app.ts";
import { randomAddress } from "../helpers/chain.ts";
import { holdTransaction, waitForALockWait } from "../helpers/held-transaction.ts";
import { createAlert, eventsOf, exitWithin, spawnApi, spawnWorker, track, tx, waitFor } from "../helpers/pipeline.ts";
import { freePort } from "../helpers/ports.ts";
import { bearer } from "../helpers/seed.ts";

let t: TestApp;
let token: string;

beforeAll(async () => {
  t = await startTestApp("pg-backend-killed");
  token = await t.token("alice");
});
afterAll(async () => {
  await t.close();
});

/** Terminates the backends of this test's database that wait on a lock; how many. */
async function terminateLockWaiters(): Promise<number> {
  const rows = await t.deps.sql<{ terminated: boolean }[]>`
    select pg_terminate_backend(pid) as terminated from pg_stat_activity
    where datname = current_database() and wait_event_type = 'Lock' and pid <> pg_backend_pid()`;
  return rows.filter((row) => row.terminated).length;
}

const stillRunningAfter = async (child: { exitCode: number | null; signalCode: string | null }, ms: number) => {
  await new Promise((resolve) => setTimeout(resolve, ms));
  return child.exitCode === null && child.signalCode === null;
};

describe("a PostgreSQL backend terminated under a transaction", () => {
  it("rejects the transaction, and the process goes on and queries again", async () => {
    const script = fileURLToPath(new URL("../fixtures/processes/terminated-transaction.ts", import.meta.url));
    let output = "";
    const child = spawn(process.execPath, ["--import", "tsx", script], {
      env: { ...process.env, ...testEnv({ DATABASE_URL: t.config.databaseUrl }) },
      stdio: ["ignore", "pipe", "pipe"],
    });
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    await waitFor("the process's transaction to wait", async () => {
      const [row] = await t.deps.sql<{ n: number }[]>`
        select count(*)::int as n from pg_stat_activity
        where datname = current_database() and query like '%terminated-transaction%' and pid <> pg_backend_pid()`;
      return row!.n > 0;
    });
    await t.deps.sql`
      select pg_terminate_backend(pid) from pg_stat_activity
      where datname = current_database() and query like '%terminated-transaction%' and pid <> pg_backend_pid()`;
    expect(await exitWithin(child, 20_000), output).toEqual({ code: 0, signal: null });
    expect(output).toMatch(/transaction rejected: .*\n.*went on\n.*queried: 1/s);
  });

  it("leaves the API running: the waiting request is answered 503, and the next one is served", async () => {
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const api = spawnApi(t, { PORT: String(port), HOST: "127.0.0.1" });
    try {
      await waitFor("the API to be ready", async () => (await fetch(`${base}/readyz`).catch(() => null))?.ok);
      const post = () =>
        fetch(`${base}/v1/wallets`, {
          method: "POST",
          headers: { ...bearer(token), "content-type": "application/json" },
          body: JSON.stringify({ address: randomAddress() }),
        });

      const release = await holdTransaction(t.deps.sql, (held) => held`lock table tracked_wallets in access exclusive mode`);
      const waiting = post();
      await waitForALockWait(t.deps.sql);
      expect(await terminateLockWaiters()).toBeGreaterThan(0);
      await release();

      expect((await waiting).status, api.output()).toBe(503);
      expect(await stillRunningAfter(api, 1_000), `the API exited: ${api.output()}`).toBe(true);
      await waitFor("the API to serve a write again", async () => (await post()).status === 201);
    } finally {
      api.kill("SIGTERM");
      await exitWithin(api, 10_000);
    }
  });

  it("leaves the worker running: the evaluation it was in is done again, and fires once", async () => {
    const wallet = await track(t, token);
    const alertId = await createAlert(t, token, { walletId: wallet.walletId, condition: "large_transfer", threshold: 100 });
    const release = await holdTransaction(t.deps.sql, (held) => held`lock table alert_events in access exclusive mode`);
    const worker = spawnWorker(t);
    try {
      const ingest = await t.app.inject({
        method: "POST",
        url: "/v1/ingest/transactions",
        headers: bearer(token),
        payload: { transactions: [tx({ from: wallet.address, to: randomAddress(), amount: 500 })] },
      });
      expect(ingest.statusCode, ingest.body).toBe(202);
      await waitForALockWait(t.deps.sql, "the evaluation to wait on the held lock");
      expect(await terminateLockWaiters()).toBeGreaterThan(0);
      await release();

      expect(await stillRunningAfter(worker, 1_000), `the worker exited: ${worker.output()}`).toBe(true);
      // Its job failed with the connection; the reconciler's next sweep (every 30 s) runs it again.
      await waitFor("the transaction to be evaluated", async () => (await eventsOf(t, alertId)).length > 0, 90_000);
      expect(await eventsOf(t, alertId)).toHaveLength(1);
    } finally {
      await release();
      worker.kill("SIGTERM");
      await exitWithin(worker, 10_000);
    }
  }, 120_000);
});
