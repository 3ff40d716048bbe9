// PostgreSQL goes away under a worker with deliveries queued: every job fails and is retried,
// and the log an operator reads says so once per kind of error, not once per job (README,
// Monitoring).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { enqueueDeliveries } from "../../src/queue/deliveries.ts";
import { QUEUES } from "../../src/queue/names.ts";
import type { RunningWorkers } from "../../src/queue/run-workers.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { waitFor } from "../helpers/pipeline.ts";
import type { TcpProxy } from "../helpers/tcp-proxy.ts";
import { startWorkersBehindProxy, type WorkersBehindProxy } from "../helpers/workers-behind-proxy.ts";

let t: TestApp;
let workers: WorkersBehindProxy;
let proxy: TcpProxy;
let running: RunningWorkers;
let logLines: string[] = [];
let failures = 0;

beforeAll(async () => {
  t = await startTestApp("job-failure-log");
  workers = await startWorkersBehindProxy(t, [QUEUES.deliverWebhook]);
  ({ proxy, running, logLines } = workers);
  for (const worker of running.workers) worker.on("failed", () => failures++);
});
afterAll(async () => {
  await workers?.close();
  await t?.close();
});

const jobFailedLines = (from: number) => logLines.slice(from).filter((line) => line.includes('"msg":"job failed'));

describe("job failures while PostgreSQL is away", () => {
  it("logs forty deliveries failing on an unreachable PostgreSQL once, not forty times", async () => {
    const from = logLines.length;
    await proxy.cut();
    try {
      const items = Array.from({ length: 40 }, (_, i) => ({ notificationId: `ntf_outage${i}`, channel: "webhook" as const }));
      await enqueueDeliveries(t.deps.queues, items);
      await waitFor("every delivery to fail once", async () => failures >= 40, 30_000);
      const lines = jobFailedLines(from);
      expect(lines.length).toBeGreaterThan(0);
      // One per kind of error (a refused connection; at most a dropped one besides).
      expect(lines.length, lines.join("")).toBeLessThanOrEqual(2);
      expect(lines[0]).toContain('"queue":"deliver-webhook"');
      // BullMQ's runs of the job, named so: a delivery's attempts are its notification's.
      expect(lines[0]).toMatch(/"jobRuns":\d/);
      expect(lines[0]).not.toContain('"attempts"');
    } finally {
      await proxy.restore();
    }
  }, 60_000);
});
