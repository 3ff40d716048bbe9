// The reconciler against real Postgres and Redis: owed work whose job is gone comes back
// with the same jobId; live jobs and young work are left alone; the schedule heals itself.
import { Worker } from "bullmq";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { storeTransactionBatch } from "../../src/ingest/store.ts";
import { evaluateBatch } from "../../src/pipeline/evaluate-batch.ts";
import { keepReconcileScheduled, RECONCILE_SCHEDULER_ID, upsertReconcileSchedule } from "../../src/pipeline/reconcile-schedule.ts";
import { runReconcileOnce } from "../../src/pipeline/reconcile.ts";
import { QUEUES } from "../../src/queue/names.ts";
import { createWorkerRedis } from "../../src/redis.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { randomAddress } from "../helpers/chain.ts";
import { createAlert, track, tx, waitFor } from "../helpers/pipeline.ts";
import { deletePrefixKeys } from "../helpers/redis-keys.ts";

let t: TestApp;
let token: string;
const now = Math.floor(Date.now() / 1000);

beforeAll(async () => {
  t = await startTestApp("pipeline-reconcile");
  token = await t.token("alice");
});
afterAll(async () => {
  await t.close();
});

const batches = () => t.deps.queues[QUEUES.transactions];
// No grace period, and a clock a second ahead: everything stored so far counts as owed.
const sweep = () => runReconcileOnce({ ...t.deps, now: () => new Date(Date.now() + 1_000) }, { graceMs: 0 });

async function storedBatch(): Promise<string> {
  const { batchId } = await storeTransactionBatch(t.deps, [tx({ from: randomAddress(), to: randomAddress(), blockTime: now })]);
  return batchId!;
}

/** Two open webhook notifications of a fresh alert, from one evaluated batch, oldest first. */
async function twoNotifications(): Promise<string[]> {
    const wallet = await track(t, token);
    const alertId = await createAlert(t, token, { walletId: wallet.walletId, condition: "large_transfer", threshold: 1 });
    const { batchId } = await storeTransactionBatch(t.deps, [
      tx({ from: wallet.address, to: randomAddress(), amount: 5, blockTime: now }),
      tx({ from: wallet.address, to: randomAddress(), amount: 6, blockTime: now + 1 }),
    ]);
    await evaluateBatch(t.deps, batchId!);
  return (await t.deps.sql<{ id: string }[]>`select id from notifications where alert_id = ${alertId} order by id`).map((r) => r.id);
}

describe("runReconcileOnce", () => {
  it("re-enqueues an unevaluated batch whose job is gone, under the same jobId", async () => {
    const batchId = await storedBatch();
    await batches().remove(batchId);
    expect(await batches().getJobState(batchId)).toBe("unknown");
    expect((await sweep()).batches).toBeGreaterThanOrEqual(1);
    expect(await batches().getJobState(batchId)).toBe("waiting");
    // A second sweep finds the job alive and adds nothing.
    const waitingBefore = await batches().getWaitingCount();
    await sweep();
    expect(await batches().getWaitingCount()).toBe(waitingBefore);
  });

  it("leaves work younger than the grace period to its first enqueue", async () => {
    const batchId = await storedBatch();
    await batches().remove(batchId);
    await runReconcileOnce(t.deps, { graceMs: 60_000 });
    expect(await batches().getJobState(batchId)).toBe("unknown");
    await sweep();
  });

  it("runs a failed batch job again, with its attempts afresh", async () => {
    const batchId = await storedBatch();
    await batches().obliterate({ force: true });
    await batches().add("evaluate", { batchId }, { jobId: batchId });
    const connection = createWorkerRedis(t.config.redisUrl);
    const failing = new Worker(QUEUES.transactions, async () => {
      throw new Error("Postgres is down");
    }, { connection, prefix: t.config.queuePrefix });
    await waitFor("the job to fail", async () => (await batches().getJobState(batchId)) === "failed");
    await failing.close();
    connection.disconnect();
    await sweep();
    expect(await batches().getJobState(batchId)).toBe("waiting");
    // Its spent attempts not counted: a job with BullMQ retries (EVALUATE_JOB_OPTIONS) has them all again.
    expect((await batches().getJob(batchId))?.attemptsMade).toBe(0);
  });

  it("re-enqueues an open notification whose delivery job is gone, and not a delivered one", async () => {
    const ids = await twoNotifications();
    expect(ids).toHaveLength(2);
    const deliveries = t.deps.queues[QUEUES.deliverWebhook];
    for (const id of ids) await deliveries.remove(id);
    await t.deps.sql`update notifications set status = 'delivered' where id = ${ids[1]!}`;
    await sweep();
    expect(await deliveries.getJobState(ids[0]!)).toBe("waiting");
    expect(await deliveries.getJobState(ids[1]!)).toBe("unknown");
  });

  it("re-enqueues an unevaluated batch whose job is kept but listed nowhere (its wait list lost, as an evicting Redis leaves it)", async () => {
    const batchId = await storedBatch();
    await t.deps.redis.del(batches().keys.wait!);
    // The record is there, so an add under its id would be ignored; no worker will ever take it.
    expect(await t.deps.redis.exists(batches().toKey(batchId))).toBe(1);
    expect(await batches().getJobState(batchId)).toBe("unknown");
    // Not doubted while younger than stuckMs: a backlog's jobs are not looked for in the lists.
    await sweep();
    expect(await batches().getJobState(batchId)).toBe("unknown");
    const doubting = await runReconcileOnce({ ...t.deps, now: () => new Date(Date.now() + 1_000) }, { graceMs: 0, stuckMs: 0 });
    expect(doubting.batches).toBeGreaterThanOrEqual(1);
    expect(await batches().getJobState(batchId)).toBe("waiting");
  });

  it("re-enqueues an open notification whose job is listed nowhere once its row has not moved for stuckMs, and leaves a fresher one to its job", async () => {
    const [stale, fresh] = await twoNotifications();
    const deliveries = t.deps.queues[QUEUES.deliverWebhook];
    // A retry's delayed job, then the delayed set lost.
    for (const id of [stale!, fresh!]) {
      const job = (await deliveries.getJob(id))!;
      await deliveries.remove(id);
      await deliveries.add(job.name, job.data, { jobId: id, delay: 3_600_000 });
      expect(await deliveries.getJobState(id)).toBe("delayed");
    }
    await t.deps.redis.del(deliveries.keys.delayed!);
    await t.deps.sql`update notifications set status = 'retrying', updated_at = now() - interval '1 hour' where id = ${stale!}`;
    await t.deps.sql`update notifications set status = 'retrying', updated_at = now() where id = ${fresh!}`;

    await sweep();
    expect(await deliveries.getJobState(stale!)).toBe("waiting");
    expect(await deliveries.getJobState(fresh!)).toBe("unknown");
  });

  it("enqueues score changes that no job evaluated", async () => {
    const [row] = await t.deps.sql<{ id: number }[]>`
      insert into risk_score_history (address, previous_score, score, factors, cause)
      values (${randomAddress()}, 0, 60, '{mixer_interaction}', 'labels') returning id::float8 as id`;
    expect((await sweep()).scoreChanges).toBeGreaterThanOrEqual(1);
    const jobs = await t.deps.queues[QUEUES.risk].getWaiting();
    expect(jobs.some((job) => (job.data as { scoreChangeIds: number[] }).scoreChangeIds.includes(row!.id))).toBe(true);
  });
});

describe("the reconciler's schedule", () => {
  it("comes back on the keeper's timer after its Redis keys vanish", async () => {
    const maintenance = t.deps.queues[QUEUES.maintenance];
    await upsertReconcileSchedule(t.deps.queues);
    expect(await maintenance.getJobScheduler(RECONCILE_SCHEDULER_ID)).toBeTruthy();
    await deletePrefixKeys(t.deps.redis, t.config.queuePrefix);
    expect(await maintenance.getJobScheduler(RECONCILE_SCHEDULER_ID)).toBeFalsy();
    // The keeper starts after the deletion: started before, its 100 ms timer could put the
    // schedule back between the deletion and the check above.
    const keeper = keepReconcileScheduled(t.deps, 100);
    try {
      await waitFor("the schedule to be re-created", async () => maintenance.getJobScheduler(RECONCILE_SCHEDULER_ID));
      // BullMQ runs a fresh `every` schedule at once: the sweep is queued, not 30 s away.
      expect(await maintenance.count()).toBeGreaterThanOrEqual(1);
    } finally {
      keeper.stop();
    }
  });
});
