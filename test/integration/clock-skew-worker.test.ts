// A real worker process (src/bin/worker.ts) whose clock is 120 s ahead of PostgreSQL's
// (libfaketime: test/helpers/shifted-clock.ts). Such a worker sent a second firing inside a
// 60 s cooldown, and one 10 minutes ahead had every webhook it signed refused for good, while
// its /readyz said ready and nothing said why. Now it says so at warn, its /readyz answers 503
// naming its clock, and it takes no job, its first included, until its clock is put right: then
// it says so at info and evaluates the batch that waited, which fires once.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { storeTransactionBatch } from "../../src/ingest/store.ts";
import { QUEUES } from "../../src/queue/names.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { randomAddress } from "../helpers/chain.ts";
import { exited, seedWalletsWithAlert, tx, waitFor } from "../helpers/pipeline.ts";
import { freePort } from "../helpers/ports.ts";
import { logLines, shiftedClock, spawnShifted } from "../helpers/shifted-clock.ts";

const ADMIN = { ADMIN_USER: "ops", ADMIN_PASSWORD: "correct-horse-battery" };
const AUTHORIZATION = `Basic ${Buffer.from(`${ADMIN.ADMIN_USER}:${ADMIN.ADMIN_PASSWORD}`).toString("base64")}`;

let t: TestApp;

beforeAll(async () => {
  t = await startTestApp("clock-skew-worker");
});
afterAll(async () => {
  await t.close();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("a worker whose clock is 120 s ahead of PostgreSQL's", () => {
  it("says so at warn, is not ready, and evaluates nothing until its clock is put right; then it evaluates the batch, which fires once", async () => {
    const [wallet] = await seedWalletsWithAlert(t, 1, "large_transfer", 100);
    const { batchId } = await storeTransactionBatch(t.deps, [tx({ from: wallet!.address, to: randomAddress(), amount: 500 })]);
    const evaluated = async () =>
      (await t.deps.sql<{ at: Date | null }[]>`select evaluated_at as at from ingest_batches where id = ${batchId!}`)[0]?.at != null;
    const events = async () => (await t.deps.sql<{ n: number }[]>`select count(*)::int as n from alert_events where alert_id = ${wallet!.alertId}`)[0]!.n;
    const notifications = async () =>
      (await t.deps.sql<{ n: number }[]>`select count(*)::int as n from notifications where alert_id = ${wallet!.alertId}`)[0]!.n;

    const clock = shiftedClock("+120s");
    const port = await freePort();
    const worker = spawnShifted(t, "src/bin/worker.ts", clock, {
      ...ADMIN,
      WORKER_QUEUES: "transactions,risk",
      WORKER_METRICS_PORT: String(port),
      HOST: "127.0.0.1",
    });
    const get = (path: string, headers: Record<string, string> = {}) => fetch(`http://127.0.0.1:${port}${path}`, { headers }).catch(() => null);
    try {
      await waitFor("the worker to start", async () => worker.output().includes('"msg":"worker started"') || worker.exitCode !== null, 30_000);
      expect(worker.exitCode, worker.output()).toBeNull();
      const warned = logLines(worker.output()).filter((line) => line.level === 40 && line.msg.startsWith("worker: this process's clock"));
      expect(warned, worker.output()).toHaveLength(1);
      expect(warned[0]!.msg).toMatch(
        /^worker: this process's clock is 120 s ahead of PostgreSQL's \(bound 5 s\): it takes no jobs until they agree; set this host's clock right \(NTP or chrony/,
      );
      expect(Math.abs((warned[0]!.offsetSeconds as number) - 120)).toBeLessThan(2);
      expect(warned[0]!.boundSeconds).toBe(5);

      const readyz = (await get("/readyz"))!;
      expect(readyz.status).toBe(503);
      expect(readyz.headers.get("retry-after")).toBe("5");
      expect(await readyz.json()).toMatchObject({
        status: 503,
        code: "unavailable",
        detail: "this process's clock is 120 s ahead of PostgreSQL's (bound 5 s): it takes no jobs until they agree",
      });
      const metrics = await (await get("/metrics", { authorization: AUTHORIZATION }))!.text();
      const offset = Number(/^wallet_alerts_clock_offset_seconds (\S+)$/m.exec(metrics)?.[1]);
      expect(Math.abs(offset - 120), metrics).toBeLessThan(2);

      // Its first job included: the batch stored before it started waits.
      await sleep(3_000);
      expect(await evaluated()).toBe(false);
      expect(await events()).toBe(0);
      expect(await t.deps.queues[QUEUES.transactions].getActiveCount()).toBe(0);
      expect(await t.deps.queues[QUEUES.transactions].getWaitingCount()).toBe(1);

      clock.set("+0s");
      await waitFor("the worker to say its clock agrees again", async () =>
        logLines(worker.output()).some((line) => line.level === 30 && line.msg.startsWith("worker: this process's clock agrees with PostgreSQL's again")),
      );
      await waitFor("the batch to be evaluated", evaluated, 15_000);
      expect((await get("/readyz"))!.status).toBe(200);
      // Once, however long it waited.
      await sleep(1_000);
      expect(await events()).toBe(1);
      expect(await notifications()).toBe(1);
      expect(logLines(worker.output()).filter((line) => line.level === 40 && line.msg.startsWith("worker: this process's clock"))).toHaveLength(1);
    } finally {
      worker.kill("SIGTERM");
      const { code } = await exited(worker);
      clock.remove();
      expect(code, worker.output()).toBe(0);
    }
  }, 90_000);

  it("stops at once on SIGTERM while it takes no jobs, and exits 0", async () => {
    const clock = shiftedClock("-660s");
    const worker = spawnShifted(t, "src/bin/worker.ts", clock, { WORKER_QUEUES: "transactions,risk" });
    try {
      await waitFor("the worker to start", async () => worker.output().includes('"msg":"worker started"') || worker.exitCode !== null, 30_000);
      expect(logLines(worker.output()).some((line) => line.level === 40 && line.msg.startsWith("worker: this process's clock is 660 s behind PostgreSQL's"))).toBe(true);
      const began = Date.now();
      worker.kill("SIGTERM");
      const { code } = await exited(worker);
      expect(code, worker.output()).toBe(0);
      expect(Date.now() - began).toBeLessThan(5_000);
    } finally {
      if (worker.exitCode === null) worker.kill("SIGKILL");
      await exited(worker);
      clock.remove();
    }
  }, 60_000);
});
