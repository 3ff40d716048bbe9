// A process's clock against PostgreSQL's, in this process: the watch (clock-watch.ts) with a
// shifted clock of its own says once at warn that it is off and once at info that it agrees
// again, /readyz and the gauge say it meanwhile, and a failed measurement changes nothing. And
// the workers' gate (run-workers.ts): closed, they take no job, also none that arrives while a
// worker blocks waiting for one (BullMQ's pause() does not stop a worker that waits from taking
// the next job that comes); opened, they take them. The real processes under a shifted clock:
// clock-skew-worker.test.ts and clock-skew-api.test.ts.
import { Writable } from "node:stream";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClockSkewWatch, WORKER_CLOCK_ROLE } from "../../src/clock-watch.ts";
import type { Sql } from "../../src/db/client.ts";
import { storeTransactionBatch } from "../../src/ingest/store.ts";
import { createLogger } from "../../src/logger.ts";
import { registerClockOffsetGauge } from "../../src/metrics/clock-metrics.ts";
import { createChannels } from "../../src/notify/channels/index.ts";
import { QUEUES } from "../../src/queue/names.ts";
import { runWorkers, type JobGate } from "../../src/queue/run-workers.ts";
import { createReadinessCheck } from "../../src/readiness.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { randomAddress } from "../helpers/chain.ts";
import { seedWalletsWithAlert, tx, waitFor } from "../helpers/pipeline.ts";

let t: TestApp;
let wallet: { address: string; alertId: string };

beforeAll(async () => {
  t = await startTestApp("clock-skew-gate");
  wallet = (await seedWalletsWithAlert(t, 1, "large_transfer", 100))[0]!;
});
afterAll(async () => {
  await t.close();
});

function capturingLogger() {
  const lines: Array<{ level: number; msg: string } & Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split("\n").filter(Boolean)) lines.push(JSON.parse(line) as (typeof lines)[number]);
      done();
    },
  });
  return { logger: createLogger("debug", sink), lines };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("the clock watch", () => {
  it("says once at warn that the clock is off, answers /readyz 503 and serves the offset meanwhile, and says once at info that it agrees again", async () => {
    const { logger, lines } = capturingLogger();
    let shiftMs = 120_000;
    const watch = createClockSkewWatch({ sql: t.deps.sql, logger }, { localNow: () => Date.now() + shiftMs });
    const registry = new Registry();
    registerClockOffsetGauge(registry, watch);
    const changes: boolean[] = [];
    watch.onChange((agrees) => changes.push(agrees));
    const readiness = createReadinessCheck({ ...t.deps, clockSkew: watch });
    try {
      expect(await registry.getSingleMetricAsString("wallet_alerts_clock_offset_seconds")).not.toMatch(/^wallet_alerts_clock_offset_seconds /m);
      await watch.start(WORKER_CLOCK_ROLE);
      expect(watch.agrees()).toBe(false);
      expect(watch.problem()).toBe("this process's clock is 120 s ahead of PostgreSQL's (bound 5 s): it takes no jobs until they agree");
      const warned = lines.filter((line) => line.level === 40);
      expect(warned).toHaveLength(1);
      expect(warned[0]!.msg).toMatch(/^worker: this process's clock is 120 s ahead of PostgreSQL's \(bound 5 s\): it takes no jobs until they agree; set this host's clock right/);
      expect(warned[0]!.offsetSeconds).toBeCloseTo(120, 0);
      expect(warned[0]!.boundSeconds).toBe(5);
      expect(await readiness()).toEqual({ ready: false, reason: watch.problem(), retryAfter: 5 });
      const gauge = /^wallet_alerts_clock_offset_seconds (\S+)$/m.exec(await registry.getSingleMetricAsString("wallet_alerts_clock_offset_seconds"));
      expect(Number(gauge?.[1])).toBeCloseTo(120, 0);

      // Measured again every 5 s while off: said once, not at each measurement.
      await sleep(5_500);
      expect(lines.filter((line) => line.level === 40)).toHaveLength(1);

      shiftMs = -300;
      await waitFor("the clock to agree again", async () => watch.agrees(), 10_000);
      const info = lines.filter((line) => line.level === 30);
      expect(info).toHaveLength(1);
      expect(info[0]!.msg).toMatch(/^worker: this process's clock agrees with PostgreSQL's again \(0\.3 s behind, bound 5 s\): it takes jobs again$/);
      expect(changes).toEqual([true]);
      expect(watch.problem()).toBeUndefined();
      expect(await readiness()).toEqual({ ready: true });
      expect(Number(/^wallet_alerts_clock_offset_seconds (\S+)$/m.exec(await registry.getSingleMetricAsString("wallet_alerts_clock_offset_seconds"))?.[1])).toBeCloseTo(-0.3, 1);
    } finally {
      watch.stop();
    }
  }, 30_000);

  it("changes nothing when a measurement fails: a clock that was off stays off, and one never measured is not off but takes no jobs", async () => {
    const { logger, lines } = capturingLogger();
    let down = false;
    const sql = ((strings: TemplateStringsArray, ...values: unknown[]) =>
      down ? Promise.reject(Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" })) : t.deps.sql(strings, ...(values as never[]))) as unknown as Sql;
    let shiftMs = -600_000;
    const watch = createClockSkewWatch({ sql, logger }, { localNow: () => Date.now() + shiftMs });
    try {
      await watch.start(WORKER_CLOCK_ROLE);
      expect(watch.problem()).toMatch(/^this process's clock is 600 s behind PostgreSQL's/);
      down = true;
      shiftMs = 0;
      await sleep(5_500);
      expect(watch.agrees()).toBe(false);
      expect(watch.problem()).toMatch(/600 s behind/);
      expect(lines.filter((line) => line.level >= 30)).toHaveLength(1);
    } finally {
      watch.stop();
    }

    down = true;
    const unmeasured = createClockSkewWatch({ sql, logger: capturingLogger().logger });
    try {
      await unmeasured.start(WORKER_CLOCK_ROLE);
      expect(unmeasured.reading()).toBeUndefined();
      expect(unmeasured.problem()).toBeUndefined();
      expect(unmeasured.agrees()).toBe(false);
      // PostgreSQL back: measured again within seconds, and a worker may take jobs.
      down = false;
      await waitFor("the first measurement", async () => unmeasured.agrees(), 5_000);
    } finally {
      unmeasured.stop();
    }
  }, 30_000);
});

describe("the workers' gate", () => {
  function gate(open: boolean): JobGate & { set: (open: boolean) => void } {
    const listeners = new Set<(open: boolean) => void>();
    return {
      open: () => open,
      onChange: (listener) => {
        listeners.add(listener);
        return () => listeners.delete(listener);
      },
      set: (value) => {
        open = value;
        for (const listener of listeners) listener(value);
      },
    };
  }
  const start = (jobs: JobGate) => runWorkers({ ...t.deps, channels: createChannels(t.config, t.deps.logger) }, { queues: ["transactions"], gate: jobs });
  const large = () => tx({ from: wallet.address, to: randomAddress(), amount: 500 });
  const evaluated = async (batchId: string) =>
    (await t.deps.sql<{ at: Date | null }[]>`select evaluated_at as at from ingest_batches where id = ${batchId}`)[0]?.at != null;
  const events = async () => (await t.deps.sql<{ n: number }[]>`select count(*)::int as n from alert_events where alert_id = ${wallet.alertId}`)[0]!.n;

  it("takes no job while closed from the start, and takes it once opened", async () => {
    const before = await events();
    const jobs = gate(false);
    const running = start(jobs);
    try {
      const { batchId } = await storeTransactionBatch(t.deps, [large()]);
      await sleep(2_000);
      expect(await evaluated(batchId!)).toBe(false);
      expect(await events()).toBe(before);
      expect(await t.deps.queues[QUEUES.transactions].getActiveCount()).toBe(0);

      jobs.set(true);
      await waitFor("the batch to be evaluated", () => evaluated(batchId!), 10_000);
      expect(await events()).toBe(before + 1);
    } finally {
      await running.close();
    }
  }, 30_000);

  it("closes at once while closed, and an opening after the close starts nothing", async () => {
    const jobs = gate(false);
    const running = start(jobs);
    const { batchId } = await storeTransactionBatch(t.deps, [large()]);
    await sleep(500);
    const began = Date.now();
    await running.close();
    expect(Date.now() - began).toBeLessThan(5_000);
    jobs.set(true);
    await sleep(1_000);
    expect(await evaluated(batchId!)).toBe(false);
    // Left for the next test's workers.
    await t.deps.sql`update ingest_batches set evaluated_at = now() where id = ${batchId!}`;
    await t.deps.queues[QUEUES.transactions].drain();
  }, 30_000);

  it("takes no job once closed, also one that comes while a worker waits for one, and takes it once opened again", async () => {
    const before = await events();
    const jobs = gate(true);
    const running = start(jobs);
    try {
      const first = await storeTransactionBatch(t.deps, [large()]);
      await waitFor("the first batch to be evaluated", () => evaluated(first.batchId!), 10_000);
      // Drained: the worker blocks waiting for the next job.
      await sleep(300);

      jobs.set(false);
      const second = await storeTransactionBatch(t.deps, [large()]);
      await sleep(2_000);
      expect(await evaluated(second.batchId!)).toBe(false);
      expect(await events()).toBe(before + 1);
      // Handed back whole: waiting for another worker (or this one), not held.
      expect(await t.deps.queues[QUEUES.transactions].getActiveCount()).toBe(0);
      expect(await t.deps.queues[QUEUES.transactions].getWaitingCount()).toBe(1);

      jobs.set(true);
      await waitFor("the second batch to be evaluated", () => evaluated(second.batchId!), 10_000);
      expect(await events()).toBe(before + 2);
    } finally {
      await running.close();
    }
  }, 30_000);
});
