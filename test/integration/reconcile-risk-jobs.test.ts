// The reconciler and the `risk` queue against real Postgres and Redis. A risk job's id names
// its chunk of score changes (risk-<first>-<last>), so the sweep rebuilds the same id for the
// same unevaluated changes, and BullMQ ignores an add whose id it still keeps as failed (for a
// week) or completed: the sweep must run such a job afresh, or the changes stay unevaluated
// and their risk_score_increase alerts never fire. Each test leaves every change evaluated,
// so the next one's sweep builds its chunks from its own changes only.
import { UnrecoverableError, Worker } from "bullmq";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { enqueueScoreEvaluation } from "../../src/pipeline/enqueue-risk.ts";
import { evaluateScoreChanges } from "../../src/pipeline/evaluate-risk.ts";
import { runReconcileOnce } from "../../src/pipeline/reconcile.ts";
import { QUEUES, type EvaluateRiskJob } from "../../src/queue/names.ts";
import { createWorkerRedis } from "../../src/redis.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { randomAddress } from "../helpers/chain.ts";
import { createAlert, eventsOf, startWorkers, track, waitFor } from "../helpers/pipeline.ts";

let t: TestApp;
let token: string;

beforeAll(async () => {
  t = await startTestApp("reconcile-risk-jobs");
  token = await t.token("alice");
});
afterAll(async () => {
  await t.close();
});

const riskQueue = () => t.deps.queues[QUEUES.risk];
// No grace period, and a clock a second ahead: everything stored so far counts as owed.
const sweep = () => runReconcileOnce({ ...t.deps, now: () => new Date(Date.now() + 1_000) }, { graceMs: 0 });
const jobIdOf = (ids: number[]) => `risk-${Math.min(...ids)}-${Math.max(...ids)}`;

/** Unevaluated label-caused score changes, 0 → 60, one per address; their ids in order. */
async function scoreChanges(addresses: string[]): Promise<number[]> {
  const ids: number[] = [];
  for (const address of addresses) {
    const [row] = await t.deps.sql<{ id: number }[]>`
      insert into risk_score_history (address, previous_score, score, factors, cause)
      values (${address}, 0, 60, '{mixer_interaction}', 'labels') returning id::float8 as id`;
    ids.push(row!.id);
  }
  return ids;
}

async function unevaluated(ids: number[]): Promise<number[]> {
  const rows = await t.deps.sql<{ id: number }[]>`
    select id::float8 as id from risk_score_history where id = any(${ids}::bigint[]) and evaluated_at is null order by id`;
  return rows.map((row) => row.id);
}

/** Fails every risk job it takes at once, whatever attempts it has left, as a long Postgres outage would in the end. */
async function failRiskJob(jobId: string): Promise<void> {
  const connection = createWorkerRedis(t.config.redisUrl);
  const failing = new Worker(QUEUES.risk, async () => {
    throw new UnrecoverableError("Postgres is down");
  }, { connection, prefix: t.config.queuePrefix });
  try {
    await waitFor("the risk job to fail", async () => (await riskQueue().getJobState(jobId)) === "failed");
  } finally {
    await failing.close();
    connection.disconnect();
  }
}

/** Real risk workers until every one of `ids` is evaluated. */
async function evaluateWithRiskWorkers(ids: number[]): Promise<void> {
  const workers = startWorkers(t, ["risk"]);
  try {
    await waitFor("the score changes to be evaluated", async () => (await unevaluated(ids)).length === 0);
  } finally {
    await workers.close();
  }
}

describe("the reconciler's sweep of unevaluated score changes", () => {
  it("runs a failed risk job afresh, so its score changes are evaluated and their alert fires", async () => {
    const wallet = await track(t, token);
    const alertId = await createAlert(t, token, { walletId: wallet.walletId, condition: "risk_score_increase", threshold: 10 });
    // A label change rescored three wallets; Postgres failed over under its risk job.
    const ids = await scoreChanges([wallet.address, randomAddress(), randomAddress()]);
    await enqueueScoreEvaluation(t.deps.queues, ids);
    await failRiskJob(jobIdOf(ids));

    expect((await sweep()).scoreChanges).toBe(3);
    expect(await riskQueue().getJobState(jobIdOf(ids))).toBe("waiting");
    await evaluateWithRiskWorkers(ids);
    expect(await eventsOf(t, alertId)).toMatchObject([{ dedupeKey: `score:${ids[0]}`, observed: 60, suppressed: false }]);
  });

  it("runs a failed risk job with the changes owed now, when a change between its first and last was not in it", async () => {
    // The middle change committed after the job for its neighbours was enqueued.
    const ids = await scoreChanges([randomAddress(), randomAddress(), randomAddress()]);
    const outer = [ids[0]!, ids[2]!];
    await enqueueScoreEvaluation(t.deps.queues, outer);
    await failRiskJob(jobIdOf(outer));

    await sweep();
    const job = await riskQueue().getJob(jobIdOf(ids));
    expect(job?.data).toEqual({ scoreChangeIds: ids });
    await evaluateWithRiskWorkers(ids);
  });

  it("runs a completed risk job again while its score changes are still unevaluated", async () => {
    const ids = await scoreChanges([randomAddress(), randomAddress()]);
    await enqueueScoreEvaluation(t.deps.queues, ids);
    await evaluateWithRiskWorkers(ids);
    expect(await riskQueue().getJobState(jobIdOf(ids))).toBe("completed");
    // The evaluation's commit lost, say in a failover to a replica that had not received it.
    await t.deps.sql`update risk_score_history set evaluated_at = null where id = any(${ids}::bigint[])`;

    expect((await sweep()).scoreChanges).toBe(2);
    expect(await riskQueue().getJobState(jobIdOf(ids))).toBe("waiting");
    await evaluateWithRiskWorkers(ids);
  });

  it("leaves a waiting risk job alone and counts nothing for it", async () => {
    const ids = await scoreChanges([randomAddress()]);
    await enqueueScoreEvaluation(t.deps.queues, ids);
    const enqueuedAt = (await riskQueue().getJob(jobIdOf(ids)))!.timestamp;

    expect((await sweep()).scoreChanges).toBe(0);
    expect((await riskQueue().getJob(jobIdOf(ids)))!.timestamp).toBe(enqueuedAt);
    await evaluateWithRiskWorkers(ids);
  });
});

describe("a risk job whose attempt fails", () => {
  it("is run again by BullMQ after a backoff, without waiting for a sweep", async () => {
    const ids = await scoreChanges([randomAddress()]);
    await enqueueScoreEvaluation(t.deps.queues, ids);
    // Postgres is away for the first attempt only; the next one evaluates for real.
    const connection = createWorkerRedis(t.config.redisUrl);
    const worker = new Worker<EvaluateRiskJob>(QUEUES.risk, async (job) => {
      if (job.attemptsMade === 0) throw new Error("Postgres is down");
      return evaluateScoreChanges(t.deps, job.data.scoreChangeIds);
    }, { connection, prefix: t.config.queuePrefix });
    try {
      await waitFor("the score change to be evaluated", async () => (await unevaluated(ids)).length === 0);
      expect(await riskQueue().getJobState(jobIdOf(ids))).toBe("completed");
    } finally {
      await worker.close();
      connection.disconnect();
    }
  });
});
