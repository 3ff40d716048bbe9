// Nothing lost, nothing doubled, with real worker processes (`src/bin/worker.ts`): a worker
// killed with -9 in the middle of a batch, a Redis whose queue keys were deleted after
// ingest, and a Postgres that goes away under a working worker and comes back. In each,
// every expected event ends up recorded exactly once.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Transaction } from "../../src/domain/types.ts";
import { storeTransactionBatch } from "../../src/ingest/store.ts";
import { QUEUES } from "../../src/queue/names.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { randomAddress } from "../helpers/chain.ts";
import { exited, seedWalletsWithAlert, settled, spawnWorker, tx, waitFor } from "../helpers/pipeline.ts";
import { deletePrefixKeys } from "../helpers/redis-keys.ts";
import { startTcpProxy } from "../helpers/tcp-proxy.ts";

let t: TestApp;
const wallets: Array<{ address: string; alertId: string }> = [];
// Groups of two 1,500-transaction batches: several evaluations, so one can be cut off mid-way.
const WORKER_ENV = { WORKER_QUEUES: "transactions,risk,maintenance", EVALUATION_GROUP_TRANSACTIONS: "3000" };

beforeAll(async () => {
  t = await startTestApp("crash-recovery");
  // 300 tracked wallets, each with a large_transfer alert at 100.
  wallets.push(...(await seedWalletsWithAlert(t, 300, "large_transfer", 100)));
});
afterAll(async () => {
  await t.close();
});

/** Batches of transactions from tracked wallets; every fifth is large. Returns the (alert, signature) pairs that must fire. */
async function ingestBatches(count: number, size: number, blockTime: number): Promise<Set<string>> {
  const expected = new Set<string>();
  for (let b = 0; b < count; b++) {
    const txs: Transaction[] = [];
    for (let i = 0; i < size; i++) {
      const wallet = wallets[(b * size + i) % wallets.length]!;
      const large = i % 5 === 0;
      const item = tx({ from: wallet.address, to: randomAddress(), amount: large ? 500 : 5, blockTime: blockTime + i });
      if (large) expected.add(`${wallet.alertId} ${item.signature}`);
      txs.push(item);
    }
    await storeTransactionBatch(t.deps, txs);
  }
  return expected;
}

async function recordedEvents(): Promise<string[]> {
  const rows = await t.deps.sql<{ key: string }[]>`select alert_id || ' ' || dedupe_key as key from alert_events`;
  return rows.map((row) => row.key);
}

async function expectEachOnce(expected: Set<string>): Promise<void> {
  const events = (await recordedEvents()).filter((key) => expected.has(key));
  expect(events.length).toBe(expected.size);
  expect(new Set(events).size).toBe(expected.size);
  const [duplicates] = await t.deps.sql<{ n: number }[]>`
    select count(*)::int as n from (select event_id from notifications group by event_id having count(*) > 1) d`;
  expect(duplicates!.n).toBe(0);
}

const unevaluated = async () =>
  (await t.deps.sql<{ n: number }[]>`select count(*)::int as n from ingest_batches where evaluated_at is null`)[0]!.n;

describe("crash recovery with real worker processes", () => {
  it("records every event exactly once after a worker is killed with -9 mid-batch", async () => {
    const expected = await ingestBatches(12, 1500, 1_717_000_000);
    const first = spawnWorker(t, WORKER_ENV);
    // Kill it while it holds a group: some done, one active, the rest waiting.
    await waitFor(
      "the first worker to be in the middle of the batches",
      async () => (await unevaluated()) < 12 && (await t.deps.queues[QUEUES.transactions].getActiveCount()) > 0,
      30_000,
    );
    first.kill("SIGKILL");
    expect((await exited(first)).signal).toBe("SIGKILL");
    expect(await unevaluated()).toBeGreaterThan(0);

    const second = spawnWorker(t, WORKER_ENV);
    try {
      // The killed worker's job is taken over once its lock expires (about 20 s).
      await settled(t, 60_000);
      await expectEachOnce(expected);
    } finally {
      second.kill("SIGTERM");
      const { code } = await exited(second);
      expect(code, second.output()).toBe(0);
    }
  }, 120_000);

  it("restores the work from Postgres after the queue keys are deleted from Redis", async () => {
    const before = new Set(await recordedEvents());
    const expected = await ingestBatches(4, 500, 1_717_100_000);
    expect(await deletePrefixKeys(t.deps.redis, t.config.queuePrefix)).toBeGreaterThan(0);
    expect(await t.deps.queues[QUEUES.transactions].count()).toBe(0);
    // The reconciler leaves work younger than 5 s to its first enqueue.
    await new Promise((resolve) => setTimeout(resolve, 5_500));

    const worker = spawnWorker(t, WORKER_ENV);
    try {
      await settled(t, 60_000);
      await expectEachOnce(expected);
      expect((await recordedEvents()).filter((key) => !before.has(key) && !expected.has(key))).toEqual([]);
      expect(await t.deps.queues[QUEUES.maintenance].getJobScheduler("reconcile")).toBeTruthy();
    } finally {
      worker.kill("SIGTERM");
      const { code } = await exited(worker);
      expect(code, worker.output()).toBe(0);
    }
  }, 120_000);

  it("records every event exactly once when Postgres goes away under a working worker and comes back", async () => {
    const before = new Set(await recordedEvents());
    const expected = await ingestBatches(12, 1500, 1_717_200_000);
    // The worker reaches Postgres through a proxy that is cut, as when Postgres restarts:
    // every connection dropped, new ones refused, then the port open again.
    const database = new URL(t.config.databaseUrl);
    const proxy = await startTcpProxy({ host: database.hostname, port: Number(database.port || 5432) });
    const throughProxy = new URL(t.config.databaseUrl);
    throughProxy.port = String(proxy.port);
    const worker = spawnWorker(t, { ...WORKER_ENV, DATABASE_URL: throughProxy.toString() });
    try {
      await waitFor(
        "the worker to be in the middle of the batches",
        async () => (await unevaluated()) < 12 && (await t.deps.queues[QUEUES.transactions].getActiveCount()) > 0,
        30_000,
      );
      await proxy.cut();
      // A commit Postgres had received just before the cut may still finish: let it.
      await new Promise((resolve) => setTimeout(resolve, 500));
      const left = await unevaluated();
      expect(left).toBeGreaterThan(0);
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      // Nothing was evaluated while Postgres was away, and the worker is still running.
      expect(await unevaluated()).toBe(left);
      expect(worker.exitCode).toBeNull();
      await proxy.restore();

      await settled(t, 90_000);
      await expectEachOnce(expected);
      expect((await recordedEvents()).filter((key) => !before.has(key) && !expected.has(key))).toEqual([]);
    } finally {
      worker.kill("SIGTERM");
      const { code } = await exited(worker);
      await proxy.close();
      expect(code, worker.output()).toBe(0);
    }
  }, 150_000);
});
