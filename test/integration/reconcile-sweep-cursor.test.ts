// The reconciler's sweep is bounded (pageSize × maxPages rows per kind), so a backlog larger
// than one sweep must be covered by the sweeps after it: each one continues where the last
// stopped, and only after reaching the newest row does the next start again from the oldest.
// Real Postgres and Redis; pageSize 2 and maxPages 1 stand in for 1,000 × 50.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { storeTransactionBatch } from "../../src/ingest/store.ts";
import { runReconcileOnce } from "../../src/pipeline/reconcile.ts";
import { DELIVERY_QUEUE, QUEUES } from "../../src/queue/names.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { randomAddress } from "../helpers/chain.ts";
import { seedAlert, seedNotification } from "../helpers/delivery.ts";
import { tx } from "../helpers/pipeline.ts";

let t: TestApp;

beforeAll(async () => {
  t = await startTestApp("reconcile-sweep-cursor");
});
afterAll(async () => {
  await t.close();
});

// No grace period and a clock a second ahead: everything stored so far counts as owed.
const smallSweep = () =>
  runReconcileOnce({ ...t.deps, now: () => new Date(Date.now() + 1_000) }, { graceMs: 0, pageSize: 2, maxPages: 1 });

describe("a reconciler sweep bounded to fewer rows than are open", () => {
  it("re-enqueues every open notification whose job is gone over successive sweeps, then starts again from the oldest", async () => {
    const deliveries = t.deps.queues[DELIVERY_QUEUE.webhook];
    const alert = await seedAlert(t, { method: "webhook", webhookUrl: "http://127.0.0.1:9/hook" });
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await seedNotification(t, alert, "webhook", "http://127.0.0.1:9/hook", { enqueue: false }));
    ids.sort();
    const states = () => Promise.all(ids.map((id) => deliveries.getJobState(id)));

    expect((await smallSweep()).notifications).toBe(2);
    expect(await states()).toEqual(["waiting", "waiting", "unknown", "unknown", "unknown"]);
    expect((await smallSweep()).notifications).toBe(2);
    expect(await states()).toEqual(["waiting", "waiting", "waiting", "waiting", "unknown"]);
    // A short page: the end of the open rows.
    expect((await smallSweep()).notifications).toBe(1);
    expect(await states()).toEqual(["waiting", "waiting", "waiting", "waiting", "waiting"]);

    // The oldest job is lost again: the sweep after the end looks at the oldest rows first.
    await deliveries.remove(ids[0]!);
    expect((await smallSweep()).notifications).toBe(1);
    expect(await deliveries.getJobState(ids[0]!)).toBe("waiting");
  });

  it("re-enqueues every unevaluated batch whose job is gone over successive sweeps, then starts again from the oldest", async () => {
    const batches = t.deps.queues[QUEUES.transactions];
    const now = Math.floor(Date.now() / 1000);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const { batchId } = await storeTransactionBatch(t.deps, [tx({ from: randomAddress(), to: randomAddress(), blockTime: now })]);
      ids.push(batchId!);
    }
    ids.sort();
    for (const id of ids) await batches.remove(id);
    const states = () => Promise.all(ids.map((id) => batches.getJobState(id)));

    expect((await smallSweep()).batches).toBe(2);
    expect(await states()).toEqual(["waiting", "waiting", "unknown", "unknown", "unknown"]);
    expect((await smallSweep()).batches).toBe(2);
    expect(await states()).toEqual(["waiting", "waiting", "waiting", "waiting", "unknown"]);
    expect((await smallSweep()).batches).toBe(1);
    expect(await states()).toEqual(["waiting", "waiting", "waiting", "waiting", "waiting"]);

    await batches.remove(ids[0]!);
    expect((await smallSweep()).batches).toBe(1);
    expect(await batches.getJobState(ids[0]!)).toBe("waiting");
  });
});
