// An evaluation job that fails because PostgreSQL or Redis was away for a moment is retried by
// BullMQ within seconds, not left to the reconciler's next sweep (every 30 s): no reconciler runs
// here, so only the retry can evaluate the batch. Its first run fails deterministically: a
// trigger on alert_events raises 57P01 (admin shutdown, as a PostgreSQL restart says it) once,
// counted by a sequence (which a rollback does not undo), and lets the second run through.
import { Worker } from "bullmq";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { isUnavailableError } from "../../src/dependency-errors.ts";
import { storeTransactionBatch } from "../../src/ingest/store.ts";
import { runReconcileOnce } from "../../src/pipeline/reconcile.ts";
import { QUEUES } from "../../src/queue/names.ts";
import { createWorkerRedis } from "../../src/redis.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { randomAddress } from "../helpers/chain.ts";
import { createAlert, eventsOf, startWorkers, track, tx, waitFor } from "../helpers/pipeline.ts";

let t: TestApp;
let token: string;
const now = Math.floor(Date.now() / 1000);

beforeAll(async () => {
  t = await startTestApp("evaluation-retry");
  token = await t.token("alice");
});
afterAll(async () => {
  await t.close();
});
// Each test starts with no open batch: a sweep here sees only the test's own.
beforeEach(async () => {
  await t.deps.sql`update ingest_batches set evaluated_at = now() where evaluated_at is null`;
});

const batches = () => t.deps.queues[QUEUES.transactions];
const finished = async (batchId: string) => {
  const state = await batches().getJobState(batchId);
  return state === "completed" || state === "failed" ? state : undefined;
};

/** A tracked wallet with a large_transfer alert at 1, and a stored batch that fires it (its job queued as ingest queues it). */
async function firingBatch(): Promise<{ alertId: string; batchId: string }> {
  const wallet = await track(t, token);
  const alertId = await createAlert(t, token, { walletId: wallet.walletId, condition: "large_transfer", threshold: 1 });
  const { batchId } = await storeTransactionBatch(t.deps, [tx({ from: wallet.address, to: randomAddress(), amount: 5, blockTime: now })]);
  return { alertId, batchId: batchId! };
}

describe("an evaluation job whose run fails because PostgreSQL is briefly unavailable", () => {
  it("is retried by BullMQ, and the batch's alert fires exactly once", async () => {
    await t.deps.sql.unsafe(`
      create sequence evaluation_blip_runs;
      create function evaluation_blip() returns trigger language plpgsql as $$
      begin
        if nextval('evaluation_blip_runs') = 1 then
          raise exception using errcode = '57P01', message = 'terminating connection due to administrator command';
        end if;
        return new;
      end $$;
      create trigger evaluation_blip before insert on alert_events for each row execute function evaluation_blip();`);
    const failures: unknown[] = [];
    const workers = startWorkers(t, [QUEUES.transactions]);
    for (const worker of workers.workers) worker.on("failed", (_job, error) => failures.push(error));
    let alertId: string;
    let batchId: string;
    try {
      ({ alertId, batchId } = await firingBatch());
      expect(await waitFor("the evaluation job to finish", () => finished(batchId))).toBe("completed");
    } finally {
      await workers.close();
      await t.deps.sql.unsafe(`drop trigger evaluation_blip on alert_events; drop function evaluation_blip()`);
    }
    // The first run failed with an error counted as an outage, and the second one evaluated the batch.
    expect(failures).toHaveLength(1);
    expect(isUnavailableError(failures[0])).toBe(true);
    expect((await batches().getJob(batchId))?.attemptsMade).toBe(2);
    const [{ runs }] = await t.deps.sql<[{ runs: string }]>`select last_value as runs from evaluation_blip_runs`;
    expect(Number(runs)).toBe(2);
    const [batch] = await t.deps.sql<{ evaluated: boolean }[]>`select evaluated_at is not null as evaluated from ingest_batches where id = ${batchId}`;
    expect(batch?.evaluated).toBe(true);
    // Nothing doubled by the failed run: one event, one notification.
    const events = await eventsOf(t, alertId);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ condition: "large_transfer", suppressed: false });
    const [{ notifications }] = await t.deps.sql<[{ notifications: number }]>`
      select count(*)::int as notifications from notifications where alert_id = ${alertId}`;
    expect(notifications).toBe(1);
  });

  it("waits for its retry in the delayed set, and the reconciler leaves it there and adds no other job", async () => {
    const { batchId } = await firingBatch();
    const connection = createWorkerRedis(t.config.redisUrl);
    const refused = () => Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" });
    const failing = new Worker(QUEUES.transactions, async () => { throw refused(); }, { connection, prefix: t.config.queuePrefix });
    try {
      await waitFor("the job's first run to fail", async () => ((await batches().getJob(batchId))?.attemptsMade ?? 0) >= 1);
    } finally {
      await failing.close();
      connection.disconnect();
    }
    // No worker is left to take it: it stays delayed, however long the test runs.
    expect(await batches().getJobState(batchId)).toBe("delayed");
    const attemptsMade = (await batches().getJob(batchId))!.attemptsMade;

    // No grace, every batch doubted (its job looked for in the queue's sets and lists).
    const swept = await runReconcileOnce({ ...t.deps, now: () => new Date(Date.now() + 1_000) }, { graceMs: 0, stuckMs: 0 });
    expect(swept.batches).toBe(0);
    expect(await batches().getJobState(batchId)).toBe("delayed");
    expect((await batches().getJob(batchId))?.attemptsMade).toBe(attemptsMade);
    expect(await batches().getJobCounts("wait", "active", "delayed", "prioritized")).toEqual({ wait: 0, active: 0, delayed: 1, prioritized: 0 });
  });
});
