// The reconciler's schedule after a worker whose clock was ahead ran it (review `skew`, finding
// 4): BullMQ sets the next `reconcile` job from the clock of the worker that ran the last one,
// so a worker 15 minutes ahead left the next sweep 15 minutes away, and the upserts of the
// correct workers kept it there (no sweep for 16 minutes). The keeper now pulls such a schedule
// back, and leaves one in its normal place alone, whatever the clock of the worker that checks.
// And the last sweep's time is served on the API's /metrics, so an operator sees sweeps stop.
import { Writable } from "node:stream";
import { Worker, type Job } from "bullmq";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { createLogger } from "../../src/logger.ts";
import { keepReconcileScheduled, RECONCILE_EVERY_MS, RECONCILE_SCHEDULER_ID, upsertReconcileSchedule } from "../../src/pipeline/reconcile-schedule.ts";
import { makeReconcileProcessor } from "../../src/queue/jobs/reconcile.ts";
import { QUEUES } from "../../src/queue/names.ts";
import { createWorkerRedis } from "../../src/redis.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { deletePrefixKeys } from "../helpers/redis-keys.ts";
import { waitFor } from "../helpers/wait.ts";

const ADMIN = { ADMIN_USER: "ops", ADMIN_PASSWORD: "correct-horse-battery" };
const AUTHORIZATION = `Basic ${Buffer.from(`${ADMIN.ADMIN_USER}:${ADMIN.ADMIN_PASSWORD}`).toString("base64")}`;
const AHEAD_MS = 15 * 60_000;
const GAUGE = "wallet_alerts_reconcile_last_sweep_timestamp_seconds";

let t: TestApp;
const open: Array<() => Promise<void>> = [];

beforeAll(async () => {
  t = await startTestApp("reconcile-schedule-skew", ADMIN);
});
beforeEach(async () => {
  // Each test starts without a schedule, a lock or a recorded sweep.
  await deletePrefixKeys(t.deps.redis, t.config.queuePrefix);
});
afterEach(async () => {
  vi.useRealTimers();
  for (const close of open.splice(0).reverse()) await close();
});
afterAll(async () => {
  await t?.close();
});

const maintenance = () => t.deps.queues[QUEUES.maintenance];
const scheduler = async () => (await maintenance().getJobScheduler(RECONCILE_SCHEDULER_ID))!;

type Line = { level: number; msg: string; aheadSeconds?: number };

function logSink(): { lines: Line[]; logger: ReturnType<typeof createLogger> } {
  const lines: Line[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as Line);
      done();
    },
  });
  return { lines, logger: createLogger("debug", sink) };
}

/** A worker of the maintenance queue running the real reconcile job, noting when each run started. */
function maintenanceWorker(): { runs: number[]; close: () => Promise<void> } {
  const runs: number[] = [];
  const sweep = makeReconcileProcessor(t.deps);
  const connection = createWorkerRedis(t.config.redisUrl);
  const worker = new Worker(
    QUEUES.maintenance,
    async (job: Job) => {
      runs.push(Date.now());
      return sweep(job);
    },
    { connection, prefix: t.config.queuePrefix },
  );
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await worker.close();
    connection.disconnect();
  };
  open.push(close);
  return { runs, close };
}

/** This process's clock moved by `offsetMs` (timers stay real, and the clock keeps moving). */
function clockOff(offsetMs: number): void {
  vi.useFakeTimers({ toFake: ["Date"], shouldAdvanceTime: true, now: Date.now() + offsetMs });
}

/**
 * What the review saw: a worker whose clock is 15 minutes ahead starts (its start-up upsert),
 * runs the reconcile job once, and stops. BullMQ set the next run from its clock.
 */
async function scheduleSetByAWorkerAhead(): Promise<number> {
  clockOff(AHEAD_MS);
  try {
    await upsertReconcileSchedule(t.deps.queues);
    const first = (await scheduler()).next!;
    const skewed = maintenanceWorker();
    await waitFor("the worker ahead to run a sweep", async () => skewed.runs.length >= 1 && ((await scheduler()).next ?? 0) > first);
    await skewed.close();
  } finally {
    vi.useRealTimers();
  }
  return (await scheduler()).next!;
}

/** A schedule a correct worker made and ran once: its next run about one period away. */
async function scheduleInItsPlace(): Promise<{ next: number; iterationCount?: number; runs: number[] }> {
  await upsertReconcileSchedule(t.deps.queues);
  const first = (await scheduler()).next!;
  const worker = maintenanceWorker();
  await waitFor("a first sweep", async () => worker.runs.length >= 1 && ((await scheduler()).next ?? 0) > first);
  const { next, iterationCount } = await scheduler();
  return { next: next!, iterationCount, runs: worker.runs };
}

/** A keeper that refreshes (a refresh has run once its lock is taken), then time for anything it queued to run. */
async function refreshOnce(logger: ReturnType<typeof createLogger>): Promise<void> {
  const keeper = keepReconcileScheduled({ ...t.deps, logger }, 100);
  try {
    await waitFor("a refresh", async () => (await t.deps.redis.exists(`${t.config.queuePrefix}:reconcile-schedule-lock`)) === 1);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
  } finally {
    keeper.stop();
  }
}

async function lastSweepGauge(): Promise<number | undefined> {
  const response = await t.app.inject({ url: "/metrics", headers: { authorization: AUTHORIZATION } });
  expect(response.statusCode).toBe(200);
  expect(response.body).toContain(`# TYPE ${GAUGE} gauge`);
  const sample = response.body.split("\n").find((line) => line.startsWith(`${GAUGE} `));
  return sample === undefined ? undefined : Number(sample.slice(GAUGE.length + 1));
}

describe("the reconciler's schedule set by a worker whose clock was ahead", () => {
  it("is pulled back by the keeper's next refresh, and a sweep runs within seconds", async () => {
    const staleNext = await scheduleSetByAWorkerAhead();
    expect(staleNext - Date.now()).toBeGreaterThan(AHEAD_MS - 60_000);
    const staleJobId = `repeat:${RECONCILE_SCHEDULER_ID}:${staleNext}`;
    expect(await maintenance().getJobState(staleJobId)).toBe("delayed");

    // A correct worker serves the queue: as the review saw, it runs nothing while the next
    // run is 15 minutes away. Its keeper's refresh pulls the schedule back.
    const correct = maintenanceWorker();
    const { lines, logger } = logSink();
    const refreshedAt = Date.now();
    const keeper = keepReconcileScheduled({ ...t.deps, logger }, 100);
    try {
      await waitFor("a sweep after the refresh", async () => correct.runs.length >= 1, 5_000);
    } finally {
      keeper.stop();
    }
    expect(correct.runs[0]! - refreshedAt).toBeLessThan(5_000);

    // One schedule, its next run within a period, and the far-off job gone with the old one.
    await waitFor("the next run to be set", async () => ((await scheduler()).next ?? 0) > correct.runs[0]! - 1_000);
    expect(await maintenance().getJobSchedulersCount()).toBe(1);
    expect((await scheduler()).next! - Date.now()).toBeLessThanOrEqual(RECONCILE_EVERY_MS + 1_000);
    expect(await maintenance().getJobState(staleJobId)).toBe("unknown");
    const farOff = (await maintenance().getDelayed()).filter((job) => Number(job.id!.split(":").at(-1)) - Date.now() > RECONCILE_EVERY_MS + 1_000);
    expect(farOff.map((job) => job.id)).toEqual([]);

    // Said once, with how far ahead it was.
    const pulled = lines.filter((line) => /pulled back/.test(line.msg));
    expect(pulled, JSON.stringify(lines)).toHaveLength(1);
    expect(pulled[0]!.level).toBe(40);
    expect(pulled[0]!.aheadSeconds).toBeGreaterThan(AHEAD_MS / 1000 - 60);
    expect(pulled[0]!.aheadSeconds).toBeLessThan(AHEAD_MS / 1000 + 60);

    // And /metrics shows that sweeps run again.
    await waitFor("the sweep to finish", async () => ((await lastSweepGauge()) ?? 0) * 1000 >= refreshedAt - 1_000);
  });

  it("leaves a schedule in its normal place alone: no removal, no extra sweep", async () => {
    const before = await scheduleInItsPlace();
    const jobId = `repeat:${RECONCILE_SCHEDULER_ID}:${before.next}`;
    const { lines, logger } = logSink();
    await refreshOnce(logger);
    const after = await scheduler();
    expect({ next: after.next, iterationCount: after.iterationCount }).toEqual({ next: before.next, iterationCount: before.iterationCount });
    expect(await maintenance().getJobState(jobId)).toBe("delayed");
    expect(before.runs).toHaveLength(1);
    expect(lines.filter((line) => /pulled back/.test(line.msg))).toEqual([]);
  });

  it("leaves a schedule in its normal place alone when the worker that checks has a clock behind", async () => {
    const before = await scheduleInItsPlace();
    const { lines, logger } = logSink();
    // Ten minutes behind, the next run looks 10.5 minutes ahead to this worker: Redis's clock is the judge, not its own.
    clockOff(-10 * 60_000);
    try {
      await refreshOnce(logger);
    } finally {
      vi.useRealTimers();
    }
    const after = await scheduler();
    expect({ next: after.next, iterationCount: after.iterationCount }).toEqual({ next: before.next, iterationCount: before.iterationCount });
    expect(before.runs).toHaveLength(1);
    expect(lines.filter((line) => /pulled back/.test(line.msg))).toEqual([]);
  });
});

describe("the last sweep's time on /metrics", () => {
  it("has no sample before any sweep, and the time the last one finished after one", async () => {
    expect(await lastSweepGauge()).toBeUndefined();
    const started = Date.now();
    await makeReconcileProcessor(t.deps)({} as Job);
    const finished = Date.now();
    const at = (await lastSweepGauge())!;
    // Redis's clock, to the millisecond; this host's is the same one.
    expect(at * 1000).toBeGreaterThanOrEqual(started - 50);
    expect(at * 1000).toBeLessThanOrEqual(finished + 50);
  });

  it("records nothing for a sweep that failed", async () => {
    const failing = makeReconcileProcessor({ ...t.deps, sql: (() => Promise.reject(new Error("PostgreSQL is down"))) as unknown as typeof t.deps.sql });
    await expect(failing({} as Job)).rejects.toThrow();
    expect(await lastSweepGauge()).toBeUndefined();
  });
});
