// PostgreSQL goes away under an evaluation worker while batches keep arriving (the API reaches
// PostgreSQL; the worker does not). Every run of every evaluation job fails; in an operator's
// review that was one `job failed` warning, with an unrelated stack, per batch (94 in 150 s).
// None of it is lost: BullMQ retries each job, and the reconciler starts afresh those whose
// attempts are spent. So the log says it once per kind of error, with the count and queue, and
// that the work runs again (README, Monitoring) — and every batch is evaluated once PostgreSQL
// is back.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { storeTransactionBatch } from "../../src/ingest/store.ts";
import { runReconcileOnce } from "../../src/pipeline/reconcile.ts";
import { QUEUES } from "../../src/queue/names.ts";
import type { RunningWorkers } from "../../src/queue/run-workers.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { settled, tx, waitFor } from "../helpers/pipeline.ts";
import type { TcpProxy } from "../helpers/tcp-proxy.ts";
import { startWorkersBehindProxy, type WorkersBehindProxy } from "../helpers/workers-behind-proxy.ts";

let t: TestApp;
let workers: WorkersBehindProxy;
let proxy: TcpProxy;
let running: RunningWorkers;
let logLines: string[] = [];
let failedRuns = 0;

beforeAll(async () => {
  t = await startTestApp("outage-job-log");
  workers = await startWorkersBehindProxy(t, [QUEUES.transactions]);
  ({ proxy, running, logLines } = workers);
  for (const worker of running.workers) worker.on("failed", () => failedRuns++);
});
afterAll(async () => {
  await workers?.close();
  await t?.close();
});

type LogLine = { level: number; msg: string; err?: unknown; stack?: unknown; failedJobsByQueue?: Record<string, number>; cause?: string };
const linesFrom = (from: number): LogLine[] => logLines.slice(from).map((line) => JSON.parse(line) as LogLine);

describe("evaluation jobs failing while PostgreSQL cannot be reached", () => {
  it("logs twenty failed evaluation runs once per kind of error, without a stack, saying they run again; every batch is evaluated afterwards", async () => {
    const from = logLines.length;
    await proxy.cut();
    try {
      for (let i = 0; i < 20; i++) await storeTransactionBatch(t.deps, [tx({ amount: 1, blockTime: 1_718_000_000 + i })]);
      await waitFor("every evaluation job to fail", async () => failedRuns >= 20, 60_000);
    } finally {
      await proxy.restore();
    }
    const lines = linesFrom(from);
    const perJob = lines.filter((line) => line.msg === "job failed");
    expect(perJob, JSON.stringify(perJob[0])).toEqual([]);
    const summaries = lines.filter((line) => line.msg.startsWith("job failed: a backing service is unavailable"));
    expect(summaries.length).toBeGreaterThan(0);
    // One per kind of error (the refused connections; at most a dropped one besides).
    expect(summaries.length, JSON.stringify(summaries)).toBeLessThanOrEqual(2);
    for (const line of summaries) {
      expect(line.level).toBe(40);
      expect(line.msg).toContain("re-enqueued by the reconciler");
      expect(line.failedJobsByQueue).toEqual({ transactions: expect.any(Number) });
      expect(line.cause).toMatch(/ECONNREFUSED|ECONNRESET|EPIPE|CONNECTION/);
      expect(JSON.stringify(line)).not.toContain('"stack"');
    }

    // What the line promises: the jobs run again (BullMQ's retries; a sweep starts afresh any that are spent).
    await runReconcileOnce(t.deps, { graceMs: 0 });
    await settled(t, 60_000);
  }, 120_000);
});
