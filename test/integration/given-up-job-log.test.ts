// A job given up for good is work that will not be done, and the operator needs its id: each one
// is logged as `job failed` at warn (README, Monitoring), whatever words its error carries; only
// a job spent on our own PostgreSQL's or Redis's outage is summed up (the reconciler restarts it). A
// webhook given up on a receiver that refuses connections says ECONNREFUSED too, but it is the
// receiver's, not our PostgreSQL's or Redis's: it was logged as `job failed: a backing service is
// unavailable`, once a minute, and the other given-up notifications' ids went to debug.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { QUEUES } from "../../src/queue/names.ts";
import type { RunningWorkers } from "../../src/queue/run-workers.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { seedAlert, seedNotification, waitForNotification } from "../helpers/delivery.ts";
import { freePort } from "../helpers/ports.ts";
import type { TcpProxy } from "../helpers/tcp-proxy.ts";
import { startWorkersBehindProxy, type WorkersBehindProxy } from "../helpers/workers-behind-proxy.ts";
import { waitFor } from "../helpers/wait.ts";

let t: TestApp;
let workers: WorkersBehindProxy;
let proxy: TcpProxy;
let running: RunningWorkers;
let logLines: string[] = [];
/** Every failed run the worker reported, by job id. */
const failedRuns = new Map<string, number>();

beforeAll(async () => {
  // One attempt, then one retry 50 ms later: the schedule runs out at the second attempt.
  t = await startTestApp("given-up-job-log", { RETRY_SCHEDULE: "50ms" });
  // The worker reaches PostgreSQL through a proxy that the second test cuts.
  workers = await startWorkersBehindProxy(t, [QUEUES.deliverWebhook], { RETRY_SCHEDULE: "50ms" });
  ({ proxy, running, logLines } = workers);
  for (const worker of running.workers) {
    worker.on("failed", (job) => job?.id && failedRuns.set(job.id, (failedRuns.get(job.id) ?? 0) + 1));
  }
});
afterAll(async () => {
  await workers?.close();
  await t?.close();
});

type LogLine = { level: number; msg: string; notificationId?: string; jobId?: string; queue?: string; error?: string; err?: unknown };
const linesFrom = (from: number): LogLine[] => logLines.slice(from).map((line) => JSON.parse(line) as LogLine);
const outageLines = (lines: LogLine[]) => lines.filter((line) => line.msg.startsWith("job failed: a backing service"));
const jobFailedLine = (lines: LogLine[], id: string) => lines.find((line) => line.msg === "job failed" && line.notificationId === id);

describe("the log line of a job given up", () => {
  it("logs each webhook notification given up on a receiver that refuses connections as `job failed` at warn, with its id, its alert and its receiver, without a stack", async () => {
    const from = logLines.length;
    // A port nothing listens on: every attempt is refused (ECONNREFUSED), as by a receiver that is down.
    const hook = `http://127.0.0.1:${await freePort()}/hook`;
    const ids: string[] = [];
    const alertOf = new Map<string, string>();
    for (let i = 0; i < 3; i++) {
      const alert = await seedAlert(t, { method: "webhook", webhookUrl: hook });
      const id = await seedNotification(t, alert, "webhook", hook);
      ids.push(id);
      alertOf.set(id, alert.alertId);
    }
    for (const id of ids) {
      const row = await waitForNotification(t, id, (n) => n.status === "failed");
      expect(row.attemptCount).toBe(2);
    }
    await waitFor("every given-up job to be reported failed", async () => ids.every((id) => failedRuns.get(id) === 1));

    const lines = linesFrom(from);
    expect(outageLines(lines), JSON.stringify(lines)).toEqual([]);
    for (const id of ids) {
      const line = jobFailedLine(lines, id);
      expect(line, `${id}: ${JSON.stringify(lines)}`).toMatchObject({
        level: 40,
        queue: "deliver-webhook",
        jobId: id,
        notificationId: id,
        alertId: alertOf.get(id),
        receiver: "127.0.0.1",
      });
      expect(line!.error).toContain("ECONNREFUSED");
      // A given-up delivery is an expected outcome, not a crash: no stack of where it was thrown.
      expect(line!.err).toBeUndefined();
      expect(JSON.stringify(line)).not.toContain("stack");
    }
  });

  it("logs jobs whose attempts ran out while PostgreSQL refused connections in the outage's summary, not as `job failed` each: the reconciler starts them afresh", async () => {
    const from = logLines.length;
    const ids = ["ntf_exhausted1", "ntf_exhausted2", "ntf_exhausted3"];
    await proxy.cut();
    try {
      // One attempt each: the first failure is BullMQ giving the job up.
      await t.deps.queues[QUEUES.deliverWebhook].addBulk(
        ids.map((id) => ({ name: "deliver", data: { notificationId: id }, opts: { jobId: id, attempts: 1 } })),
      );
      await waitFor("every job to fail", async () => ids.every((id) => failedRuns.get(id) === 1));
    } finally {
      await proxy.restore();
    }
    const lines = linesFrom(from);
    for (const id of ids) expect(jobFailedLine(lines, id), `${id}: ${JSON.stringify(lines)}`).toBeUndefined();
    // Once per kind of error (a refused connection; at most a dropped one besides), not once per job.
    expect(outageLines(lines).length, JSON.stringify(lines)).toBeGreaterThan(0);
    expect(outageLines(lines).length, JSON.stringify(lines)).toBeLessThanOrEqual(2);
    for (const id of ids) await t.deps.queues[QUEUES.deliverWebhook].remove(id);
  });
});
