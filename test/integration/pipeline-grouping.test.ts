// Evaluation groups and the workers' in-memory alerts, against real Postgres and Redis: a job
// takes the oldest open batches as one group (an unbroken run that passes over those another
// evaluation holds ahead of it and counts only after them); an alert created, edited, paused
// or deleted counts from the next evaluation on.
import { Registry } from "prom-client";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { storeTransactionBatch } from "../../src/ingest/store.ts";
import { createEvaluationMetrics } from "../../src/metrics/index.ts";
import { createChannels } from "../../src/notify/channels/index.ts";
import { runWorkers } from "../../src/queue/run-workers.ts";
import { createAlertRules } from "../../src/pipeline/alert-rules.ts";
import { claimBatchGroup } from "../../src/db/queries/pipeline-writes.ts";
import { waitForEarlierCounts, waitForEarlierEvaluations } from "../../src/pipeline/count-order.ts";
import { evaluateBatch } from "../../src/pipeline/evaluate-batch.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { randomAddress } from "../helpers/chain.ts";
import { holdTransaction } from "../helpers/held-transaction.ts";
import { createAlert, eventsOf, track, tx, waitFor } from "../helpers/pipeline.ts";
import { bearer } from "../helpers/seed.ts";

let t: TestApp;
let token: string;
const now = Math.floor(Date.now() / 1000);
let clock = now;

beforeAll(async () => {
  t = await startTestApp("pipeline-grouping");
  token = await t.token("alice");
});
afterAll(async () => {
  await t.close();
});
// Each test starts with no open batch, so that groups hold only what the test stored.
beforeEach(async () => {
  await t.deps.sql`update ingest_batches set evaluated_at = now() where evaluated_at is null`;
});

/** Stores one batch of transfers from `from` (no job runs: the test evaluates by hand). */
async function store(from: string, amounts: number[]): Promise<string> {
  const { batchId } = await storeTransactionBatch(
    t.deps,
    amounts.map((amount) => tx({ from, to: randomAddress(), amount, blockTime: clock++ })),
  );
  return batchId!;
}

/**
 * Another evaluation's claim on `batchIds`: the same advisory locks, held in an open
 * transaction until the returned function ends it.
 */
function holdClaims(batchIds: readonly string[]): Promise<() => Promise<void>> {
  return holdTransaction(t.deps.sql, async (sql) => {
    for (const batchId of batchIds) await sql`select pg_advisory_xact_lock(${0x62617463}, hashtext(${batchId}))`;
  });
}

const openBatches = async () =>
  (await t.deps.sql<{ id: string }[]>`select id from ingest_batches where evaluated_at is null order by id`).map((r) => r.id);

describe("evaluation groups", () => {
  it("evaluates the open batches around the one asked for together, oldest first, and their jobs then find them done", async () => {
    const wallet = await track(t, token);
    const alertId = await createAlert(t, token, { walletId: wallet.walletId, condition: "large_transfer", threshold: 100 });
    const first = await store(wallet.address, [500]);
    const second = await store(wallet.address, [600, 50]);
    const third = await store(wallet.address, [700]);

    expect(await evaluateBatch(t.deps, second)).toMatchObject({ status: "evaluated", batches: 3, transactions: 4, events: 3 });
    expect(await openBatches()).toEqual([]);
    expect((await eventsOf(t, alertId)).map((e) => e.observed).sort()).toEqual([500, 600, 700]);
    for (const batchId of [first, third]) expect(await evaluateBatch(t.deps, batchId)).toEqual({ status: "already-evaluated" });
    // The "already counted" markers go once the evaluation has committed.
    expect(await t.deps.redis.keys(`${t.deps.config.queuePrefix}:activity-batch:*`)).toEqual([]);
  });

  it("stops adding batches once EVALUATION_GROUP_TRANSACTIONS is reached (the batch that crosses it still comes along)", async () => {
    const wallet = await track(t, token);
    const [a, b, c] = [await store(wallet.address, [1, 2]), await store(wallet.address, [3, 4]), await store(wallet.address, [5, 6])];
    const small = { ...t.deps, config: { ...t.deps.config, evaluationGroupTransactions: 3 } };
    expect(await evaluateBatch(small, a)).toMatchObject({ status: "evaluated", batches: 2, transactions: 4 });
    expect(await openBatches()).toEqual([c]);
    expect(await evaluateBatch(small, b)).toEqual({ status: "already-evaluated" });
  });

  it("claims the oldest run no other evaluation holds: held batches ahead are passed over and named, a held one behind ends the run", async () => {
    const wallet = await track(t, token);
    const [a, b, c, d, e] = [
      await store(wallet.address, [1, 2]),
      await store(wallet.address, [3, 4]),
      await store(wallet.address, [5, 6]),
      await store(wallet.address, [7, 8]),
      await store(wallet.address, [9, 10]),
    ];
    const claim = (limit: number) => t.deps.sql.begin((sql) => claimBatchGroup(sql, limit));
    const run = (...ids: string[]) => ids.map((id) => ({ id, transactionCount: 2 }));

    let release = await holdClaims([a, b]);
    try {
      // Past a and b (held) to c and d, which reach the limit of 3; e is left.
      expect(await claim(3)).toEqual({ batches: run(c!, d!), heldBefore: [a, b] });
    } finally {
      await release();
    }
    release = await holdClaims([c!]);
    try {
      // a and b, then c is held: the run ends there, though d and e are free.
      expect(await claim(100)).toEqual({ batches: run(a!, b!), heldBefore: [] });
    } finally {
      await release();
    }
    expect(await claim(100)).toEqual({ batches: run(a!, b!, c!, d!, e!), heldBefore: [] });
  });

  it("waits for an earlier batch that another evaluation holds, then counts in ingest order: a burst split across them fires on its edge", async () => {
    const wallet = await track(t, token);
    const alertId = await createAlert(t, token, { walletId: wallet.walletId, condition: "unusual_activity", threshold: 5 });
    // Five transactions within seconds: the fifth reaches 5 × the floor baseline of 1 an hour.
    const first = await store(wallet.address, [1, 1, 1, 1]);
    const second = await store(wallet.address, [1]);
    const [fifth] = await t.deps.sql<{ signature: string }[]>`select signature from transactions where batch_id = ${second}`;

    const release = await holdClaims([first]);
    const evaluation = evaluateBatch(t.deps, second);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await openBatches()).toEqual([first, second].sort());
    // The holder lets go without counting (as an evaluation that failed): the run is claimed
    // again, now from the first batch.
    await release();
    expect(await evaluation).toMatchObject({ status: "evaluated", batches: 2, transactions: 5 });
    expect(await eventsOf(t, alertId)).toMatchObject([{ condition: "unusual_activity", dedupeKey: fifth!.signature, observed: 5 }]);
  });

  it("counts without an earlier batch whose evaluation hangs past EVALUATION_ORDER_WAIT, and no later run waits for it again", async () => {
    const wallet = await track(t, token);
    const [hung, next, later] = [await store(wallet.address, [1]), await store(wallet.address, [2]), await store(wallet.address, [3])];
    const impatient = { ...t.deps, config: { ...t.deps.config, evaluationOrderWaitMs: 200 } };
    // Were the hung batch waited for again, this evaluation would outlast the test's timeout.
    const patient = { ...t.deps, config: { ...t.deps.config, evaluationOrderWaitMs: 600_000 } };

    const release = await holdClaims([hung]);
    try {
      expect(await evaluateBatch(impatient, next)).toMatchObject({ status: "evaluated", batches: 2, transactions: 2 });
      expect(await openBatches()).toEqual([hung]);
      expect(await evaluateBatch(impatient, later)).toEqual({ status: "already-evaluated" });
      const afterwards = await store(wallet.address, [4]);
      expect(await evaluateBatch(patient, afterwards)).toMatchObject({ status: "evaluated", batches: 1 });
      expect(await openBatches()).toEqual([hung]);
    } finally {
      await release();
    }
    expect(await evaluateBatch(t.deps, hung)).toMatchObject({ status: "evaluated", batches: 1 });
  });
});

describe("the clock of an evaluation's writes", () => {
  it("stamps events and the alert's last notification after the wait for an earlier batch, not when the run began", async () => {
    const wallet = await track(t, token);
    const alertId = await createAlert(t, token, { walletId: wallet.walletId, condition: "large_transfer", threshold: 100 });
    const hung = await store(wallet.address, [1]);
    const next = await store(wallet.address, [500]);
    const waitMs = 300;
    const impatient = { ...t.deps, config: { ...t.deps.config, evaluationOrderWaitMs: waitMs } };
    const release = await holdClaims([hung]);
    try {
      const began = Date.now();
      expect(await evaluateBatch(impatient, next)).toMatchObject({ status: "evaluated" });
      const [event] = await t.deps.sql<{ createdAt: number }[]>`
        select extract(epoch from created_at) * 1000 as "createdAt" from alert_events where alert_id = ${alertId}`;
      const [alert] = await t.deps.sql<{ lastNotifiedAt: number }[]>`
        select extract(epoch from last_notified_at) * 1000 as "lastNotifiedAt" from alerts where id = ${alertId}`;
      // The run waited for the held batch's counts first: nothing it wrote may be stamped earlier.
      expect(Number(event!.createdAt)).toBeGreaterThanOrEqual(began + waitMs);
      expect(Number(alert!.lastNotifiedAt)).toBe(Number(event!.createdAt));
    } finally {
      await release();
    }
    expect(await evaluateBatch(t.deps, hung)).toMatchObject({ status: "evaluated" });
  });
});

describe("reading scores after the runs ahead", () => {
  const impatient = () => ({ ...t.deps, config: { ...t.deps.config, evaluationOrderWaitMs: 300 } });

  it("waits until an earlier batch another evaluation holds is committed", async () => {
    const wallet = await track(t, token);
    const earlier = await store(wallet.address, [1]);
    // The other evaluation: its claim, and (at its commit) the batch marked evaluated.
    const release = await holdTransaction(t.deps.sql, async (sql) => {
      await sql`select pg_advisory_xact_lock(${0x62617463}, hashtext(${earlier}))`;
      await sql`update ingest_batches set evaluated_at = now() where id = ${earlier}`;
    });
    let done = false;
    const waiting = waitForEarlierEvaluations(t.deps, [earlier]).then(() => (done = true));
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(done).toBe(false);
    await release();
    await waiting;
    expect(done).toBe(true);
  });

  it("does not wait for an earlier batch let go without a commit", async () => {
    const wallet = await track(t, token);
    const released = await store(wallet.address, [1]);
    const patient = { ...t.deps, config: { ...t.deps.config, evaluationOrderWaitMs: 600_000 } };
    await waitForEarlierEvaluations(patient, [released]);
    expect(await openBatches()).toEqual([released]);
  });

  it("passes an evaluation that hangs past EVALUATION_ORDER_WAIT, and no later run waits for it again", async () => {
    const wallet = await track(t, token);
    const hung = await store(wallet.address, [1]);
    const release = await holdClaims([hung]);
    try {
      await waitForEarlierEvaluations(impatient(), [hung]);
      const patient = { ...t.deps, config: { ...t.deps.config, evaluationOrderWaitMs: 600_000 } };
      // Were it waited for again, this would outlast the test's timeout.
      await waitForEarlierEvaluations(patient, [hung]);
      await waitForEarlierCounts(patient, [hung]);
    } finally {
      await release();
    }
  });
});

describe("a worker that is stopping", () => {
  const oneBatchPerRun = () => ({ ...t.deps, config: { ...t.deps.config, evaluationGroupTransactions: 1 } });

  it("ends a job's walk through older runs between two runs, and leaves its own batch open", async () => {
    const wallet = await track(t, token);
    await store(wallet.address, [1]);
    const [b, c] = [await store(wallet.address, [2]), await store(wallet.address, [3])];

    // Asked after the first run (the oldest batch): the worker is stopping.
    expect(await evaluateBatch(oneBatchPerRun(), c, () => true)).toMatchObject({ status: "evaluated", batches: 1, groups: [1] });
    expect(await openBatches()).toEqual([b, c].sort());
    expect(await evaluateBatch(oneBatchPerRun(), c)).toMatchObject({ status: "evaluated", batches: 2 });
    expect(await openBatches()).toEqual([]);
  });

  it("closes without waiting for a job to work off a backlog ahead of its batch", async () => {
    const wallet = await track(t, token);
    const ids: string[] = [];
    for (let i = 0; i < 200; i++) ids.push(await store(wallet.address, [1]));
    // Only the newest batch's job: it evaluates the 199 before it first, one per run.
    const queue = t.deps.queues.transactions;
    await queue.drain();
    const workers = runWorkers({ ...oneBatchPerRun(), channels: createChannels(t.config, t.deps.logger) }, { queues: ["transactions"] });
    try {
      await queue.add("evaluate", { batchId: ids.at(-1)! }, { jobId: ids.at(-1)! });
      await waitFor("the job to start on the oldest batches", async () => (await openBatches()).length < ids.length);
    } finally {
      // Long enough for the whole backlog: were the job not to stop between runs, close would wait for it.
      await workers.close(120_000);
    }
    const open = await openBatches();
    expect(open.length).toBeGreaterThan(0);
    expect(open).toContain(ids.at(-1));
  });
});

describe("the workers' in-memory alerts", () => {
  const patch = (alertId: string, body: Record<string, unknown>) =>
    t.app.inject({ method: "PATCH", url: `/v1/risk/alerts/${alertId}`, headers: bearer(token), payload: body });

  it("uses a new threshold from the next batch on", async () => {
    const wallet = await track(t, token);
    const alertId = await createAlert(t, token, { walletId: wallet.walletId, condition: "large_transfer", threshold: 100 });
    await evaluateBatch(t.deps, await store(wallet.address, [50]));
    expect(await eventsOf(t, alertId)).toHaveLength(0);

    expect((await patch(alertId, { threshold: 40 })).statusCode).toBe(200);
    await evaluateBatch(t.deps, await store(wallet.address, [50]));
    expect((await eventsOf(t, alertId)).map((e) => e.observed)).toEqual([50]);
  });

  it("fires an alert created after the alerts were loaded, and stops firing a deleted one", async () => {
    const wallet = await track(t, token);
    const before = await createAlert(t, token, { walletId: wallet.walletId, condition: "large_transfer", threshold: 10 });
    await evaluateBatch(t.deps, await store(wallet.address, [20]));
    const after = await createAlert(t, token, { walletId: wallet.walletId, condition: "large_transfer", threshold: 10 });
    const deleted = await t.app.inject({ method: "DELETE", url: `/v1/risk/alerts/${before}`, headers: bearer(token) });
    expect(deleted.statusCode).toBe(204);

    await evaluateBatch(t.deps, await store(wallet.address, [30]));
    expect((await eventsOf(t, after)).map((e) => e.observed)).toEqual([30]);
  });

  it("picks up a wallet's new alias for the notification payload", async () => {
    const wallet = await track(t, token, randomAddress(), "old name");
    const alertId = await createAlert(t, token, { walletId: wallet.walletId, condition: "large_transfer", threshold: 10 });
    await evaluateBatch(t.deps, await store(wallet.address, [20]));
    const renamed = await t.app.inject({
      method: "PATCH",
      url: `/v1/wallets/${wallet.walletId}`,
      headers: bearer(token),
      payload: { alias: "new name" },
    });
    expect(renamed.statusCode).toBe(200);
    await evaluateBatch(t.deps, await store(wallet.address, [30]));
    const aliases = await t.deps.sql<{ alias: string }[]>`
      select payload->'data'->>'alias' as alias from notifications where alert_id = ${alertId} order by id`;
    expect(aliases.map((row) => row.alias)).toEqual(["old name", "new name"]);
  });

  it("serves alerts from memory once loaded at the current version, and queries them right after a change", async () => {
    const rules = t.deps.alertRules;
    const wallet = await track(t, token);
    const alertId = await createAlert(t, token, { walletId: wallet.walletId, condition: "large_transfer", threshold: 10 });
    const thresholdOf = async () => (await rules.forAddresses([wallet.address])).get(wallet.address)?.map((a) => a.threshold);

    // Right after the change the alerts are queried; once the background load is in, memory serves.
    const queried = rules.stats().queried;
    expect(await thresholdOf()).toEqual([10]);
    expect(rules.stats().queried).toBe(queried + 1);
    await waitFor("the alerts to be served from memory", async () => {
      const before = rules.stats().fromMemory;
      return (await thresholdOf())?.[0] === 10 && rules.stats().fromMemory === before + 1;
    });

    expect((await patch(alertId, { threshold: 20 })).statusCode).toBe(200);
    const queriedBefore = rules.stats().queried;
    expect(await thresholdOf()).toEqual([20]);
    expect(rules.stats().queried).toBe(queriedBefore + 1);
  });

  it("tells which addresses are tracked, alerts or not, from a query right after tracking and from memory later", async () => {
    // Its own instance: nothing loaded yet, so the first lookup is a query whatever other tests left in flight.
    const rules = createAlertRules(t.deps.sql, t.deps.logger);
    const stranger = randomAddress();
    const wallet = await track(t, token); // no alerts
    const trackedAmong = async () => [...(await rules.lookup([wallet.address, stranger])).tracked];

    expect(await trackedAmong()).toEqual([wallet.address]);
    expect(rules.stats()).toMatchObject({ queried: 1, fromMemory: 0 });
    await waitFor("the tracked set to be served from memory", async () => {
      const before = rules.stats().fromMemory;
      const found = await trackedAmong();
      return rules.stats().fromMemory === before + 1 && found.length === 1 && found[0] === wallet.address;
    });

    expect((await t.app.inject({ method: "DELETE", url: `/v1/wallets/${wallet.walletId}`, headers: bearer(token) })).statusCode).toBe(204);
    expect(await trackedAmong()).toEqual([]);
  });

  it("moves the version only for changes that evaluation reads, not for the pipeline's own bookkeeping", async () => {
    const version = async () => (await t.deps.sql<{ v: number }[]>`select version::float8 as v from alert_rules_version`)[0]!.v;
    const wallet = await track(t, token);
    const alertId = await createAlert(t, token, { walletId: wallet.walletId, condition: "large_transfer", threshold: 10 });

    const start = await version();
    await t.deps.sql`update alerts set last_notified_at = now(), baseline_score = 5, failing_since = now() where id = ${alertId}`;
    await t.deps.sql`update tracked_wallets set tags = '{a}' where id = ${wallet.walletId}`;
    expect(await version()).toBe(start);

    expect((await patch(alertId, { status: "paused" })).statusCode).toBe(200);
    expect(await version()).toBe(start + 1);
  });
});

describe("evaluation metrics", () => {
  it("counts group sizes from the worker's jobs, and where the alerts came from", async () => {
    const registry = new Registry();
    const metrics = createEvaluationMetrics(registry, t.deps.alertRules);
    const wallet = await track(t, token);
    await createAlert(t, token, { walletId: wallet.walletId, condition: "large_transfer", threshold: 10 });
    const before = t.deps.alertRules.stats();
    const workers = runWorkers(
      { ...t.deps, channels: createChannels(t.config, t.deps.logger) },
      { queues: ["transactions"], metrics: [metrics] },
    );
    try {
      await store(wallet.address, [1, 2, 3]);
      await waitFor("the batch to be evaluated", async () => (await openBatches()).length === 0);
      await waitFor("the group to be observed", async () =>
        (await registry.metrics()).includes("wallet_alerts_evaluation_group_transactions_count 1"),
      );
    } finally {
      await workers.close();
    }
    const text = await registry.metrics();
    expect(text).toMatch(/^wallet_alerts_evaluation_group_transactions_sum 3$/m);
    expect(text).toMatch(/^wallet_alerts_evaluation_group_transactions_bucket\{le="10"\} 1$/m);
    const after = t.deps.alertRules.stats();
    expect(text).toContain(`wallet_alerts_alert_rules_lookups_total{source="memory"} ${after.fromMemory}`);
    expect(text).toContain(`wallet_alerts_alert_rules_lookups_total{source="query"} ${after.queried}`);
    expect(after.fromMemory + after.queried).toBe(before.fromMemory + before.queried + 1);
    expect(text).toContain(`wallet_alerts_alert_rules_loads_total ${after.loads}`);
  });
});
