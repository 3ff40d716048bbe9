// Redis goes away under a working worker process and comes back: the worker waits for it
// (README, Reliability), says so in its log once rather than on every reconnect attempt of
// every connection, and then evaluates every batch, each expected event exactly once. And a
// worker told to stop while Redis is away still stops, within its bound (README, Shutdown).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Transaction } from "../../src/domain/types.ts";
import { storeTransactionBatch } from "../../src/ingest/store.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { randomAddress } from "../helpers/chain.ts";
import { exited, exitWithin, seedWalletsWithAlert, settled, spawnWorker, tx, waitFor } from "../helpers/pipeline.ts";
import { endpointOf, startTcpProxy, throughProxy, type TcpProxy } from "../helpers/tcp-proxy.ts";

let t: TestApp;
let proxy: TcpProxy;
let wallets: Array<{ address: string; alertId: string }>;

beforeAll(async () => {
  t = await startTestApp("redis-outage");
  wallets = await seedWalletsWithAlert(t, 20, "large_transfer", 100);
  proxy = await startTcpProxy(endpointOf(t.config.redisUrl, 6379));
});
afterAll(async () => {
  await proxy.close();
  await t.close();
});

/** One batch with a large transfer from every wallet; returns the (alert, signature) pairs that must fire. */
async function ingestLargeTransfers(blockTime: number): Promise<Set<string>> {
  const txs: Transaction[] = wallets.map((wallet, i) =>
    tx({ from: wallet.address, to: randomAddress(), amount: 500, blockTime: blockTime + i }),
  );
  await storeTransactionBatch(t.deps, txs);
  return new Set(txs.map((item, i) => `${wallets[i]!.alertId} ${item.signature}`));
}

const warnings = (output: string) =>
  output.split("\n").filter((line) => line.includes('"msg":"worker error"'));

/** SIGTERM, then the worker must exit 0 (a graceful stop), whatever else the test saw. */
async function stopsGracefully(worker: ReturnType<typeof spawnWorker>): Promise<void> {
  worker.kill("SIGTERM");
  const { code } = await exited(worker);
  expect(code, worker.output()).toBe(0);
}

describe("a worker process through a Redis outage", () => {
  it("logs the outage once instead of on every reconnect, and evaluates everything once Redis is back", async () => {
    const worker = spawnWorker(t, { LOG_LEVEL: "info", REDIS_URL: throughProxy(t.config.redisUrl, proxy) });
    let cut = false;
    try {
      await waitFor("the worker to start", async () => worker.output().includes('"msg":"worker started"'), 30_000);
      const before = await ingestLargeTransfers(1_718_000_000);
      await settled(t, 30_000);

      await proxy.cut();
      cut = true;
      const atCut = worker.output().length;
      // Work arrives while the worker cannot reach Redis (the API's producers still can).
      const during = await ingestLargeTransfers(1_718_100_000);
      // Long enough for every connection to fail its reconnect attempts many times over.
      await new Promise((resolve) => setTimeout(resolve, 8_000));
      const outageLog = worker.output().slice(atCut);
      expect(worker.exitCode).toBeNull();
      expect(warnings(outageLog).length).toBeGreaterThan(0);
      // One per kind of error (the dropped connections, then the refused reconnects).
      expect(warnings(outageLog).length, outageLog).toBeLessThanOrEqual(3);

      await proxy.restore();
      cut = false;
      await settled(t, 60_000);
      const rows = await t.deps.sql<{ key: string }[]>`select alert_id || ' ' || dedupe_key as key from alert_events`;
      const keys = rows.map((row) => row.key);
      expect(keys.length).toBe(before.size + during.size);
      expect(new Set(keys)).toEqual(new Set([...before, ...during]));
    } finally {
      if (cut) await proxy.restore();
      await stopsGracefully(worker);
    }
  }, 120_000);

  it("exits 0 on SIGTERM while Redis cannot be reached, instead of waiting for it", async () => {
    const worker = spawnWorker(t, { LOG_LEVEL: "info", REDIS_URL: throughProxy(t.config.redisUrl, proxy) });
    await waitFor("the worker to start", async () => worker.output().includes('"msg":"worker started"'), 30_000);
    await proxy.cut();
    try {
      await waitFor("the worker to notice", async () => warnings(worker.output()).length > 0, 30_000);
      worker.kill("SIGTERM");
      // Up to 20 s for active jobs (none finish while Redis is cut); far more means it waits for Redis.
      const outcome = await exitWithin(worker, 45_000);
      expect(outcome, worker.output()).toEqual({ code: 0, signal: null });
    } finally {
      worker.kill("SIGKILL");
      await proxy.restore();
    }
  }, 120_000);

  it("says it waits for Redis when started without it, and starts once Redis is back", async () => {
    await proxy.cut();
    const worker = spawnWorker(t, { LOG_LEVEL: "info", REDIS_URL: throughProxy(t.config.redisUrl, proxy) });
    let cut = true;
    try {
      // Without a word the operator saw a reconnect error and no "worker started", as if hung.
      await waitFor("the worker to say it waits", async () => worker.output().includes("Redis is not reachable yet"), 30_000);
      expect(worker.output()).not.toContain('"msg":"worker started"');
      expect(worker.exitCode).toBeNull();
      await proxy.restore();
      cut = false;
      await waitFor("the worker to start", async () => worker.output().includes('"msg":"worker started"'), 30_000);
    } finally {
      if (cut) await proxy.restore();
      await stopsGracefully(worker);
    }
  }, 120_000);

  it("exits 0 on SIGTERM while it still waits for Redis to start", async () => {
    await proxy.cut();
    const worker = spawnWorker(t, { LOG_LEVEL: "info", REDIS_URL: throughProxy(t.config.redisUrl, proxy) });
    try {
      await waitFor("the worker to say it waits", async () => worker.output().includes("Redis is not reachable yet"), 30_000);
      worker.kill("SIGTERM");
      expect(await exited(worker), worker.output()).toEqual({ code: 0, signal: null });
    } finally {
      worker.kill("SIGKILL");
      await proxy.restore();
    }
  }, 120_000);
});
