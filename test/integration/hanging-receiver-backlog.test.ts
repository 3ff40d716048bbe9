// A backlog of notifications to one receiver that hangs. Its jobs find the receiver's slots
// taken and step aside, each for as long as the jobs before it and the receiver's pace say
// (notify/host-slots.ts stepAside), so the worker re-runs them about as often as the receiver
// takes attempts. With a fixed ~1 s step-aside each job came back about once a second, whatever
// the backlog: N jobs cost N runs a second for as long as they waited, and every other
// receiver's jobs queued behind those re-runs. Counted here in job runs and attempts, over a
// window marked by the hanging receiver's own attempts, not by the clock.
import { Worker, type Job } from "bullmq";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createChannels, type Channels } from "../../src/notify/channels/index.ts";
import { runReconcileOnce } from "../../src/pipeline/reconcile.ts";
import { makeDeliverProcessor } from "../../src/queue/jobs/deliver.ts";
import { DELIVERY_QUEUE, type DeliverJob } from "../../src/queue/names.ts";
import { createWorkerRedis } from "../../src/redis.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { isFinished, seedAlert, seedNotification, waitForNotification } from "../helpers/delivery.ts";
import { waitFor } from "../helpers/wait.ts";
import { startWebhookReceiver, type WebhookReceiver } from "../helpers/webhook-receiver.ts";

/** Notifications queued for the receiver that hangs. */
const BACKLOG = 60;
/** Its slots: the floor it is held to once its attempts time out. */
const SLOTS = 2;

let t: TestApp;
let hanging: WebhookReceiver;
let healthy: WebhookReceiver;
let channels: Channels;
let worker: Worker<DeliverJob>;
/** Runs of each notification's job, as the worker started them. */
const runs = new Map<string, number>();

beforeAll(async () => {
  // A timed-out attempt is retried an hour later: within the test, each notification gets one attempt at most.
  t = await startTestApp("hanging-receiver-backlog", { RETRY_SCHEDULE: "1h" });
  // Two addresses, so two receivers (a receiver is an address or a domain, whatever its port).
  [hanging, healthy] = await Promise.all([startWebhookReceiver(), startWebhookReceiver({ host: "127.0.0.2" })]);
  // A 1 s timeout: the hanging receiver frees its two slots about once a second.
  channels = createChannels(t.config, t.deps.logger, { webhookTimeoutMs: 1_000 });
  const deliver = makeDeliverProcessor({ ...t.deps, channels, webhookAttemptsPerReceiver: SLOTS }, "webhook");
  worker = new Worker<DeliverJob>(
    DELIVERY_QUEUE.webhook,
    (job: Job<DeliverJob>, token?: string) => {
      runs.set(job.data.notificationId, (runs.get(job.data.notificationId) ?? 0) + 1);
      return deliver(job, token);
    },
    { connection: createWorkerRedis(t.config.redisUrl), prefix: t.config.queuePrefix, concurrency: 10 },
  );
  worker.on("error", (error) => console.error("delivery worker error:", error));
});
afterAll(async () => {
  await hanging?.close(); // ends the hung attempts, so the worker can stop
  await worker?.close();
  await channels?.close();
  await t?.deps.queues[DELIVERY_QUEUE.webhook].obliterate({ force: true });
  await healthy?.close();
  await t?.close();
});

const runsOf = (ids: readonly string[]) => ids.reduce((sum, id) => sum + (runs.get(id) ?? 0), 0);

async function attemptsAt(alertId: string): Promise<number> {
  const [row] = await t.deps.sql<Array<{ attempts: number }>>`
    select count(*)::int as attempts from delivery_attempts a join notifications n on n.id = a.notification_id where n.alert_id = ${alertId}`;
  return row!.attempts;
}

describe("a backlog to a receiver that hangs", { timeout: 60_000 }, () => {
  it("is re-run about as often as the receiver takes attempts, not once a second per job, while another receiver's webhooks go out at their first run", async () => {
    const stuck = hanging.route("/stuck").respond(...Array.from({ length: BACKLOG }, () => ({ hang: true as const })));
    const stuckAlert = await seedAlert(t, { method: "webhook", webhookUrl: stuck.url });
    const backlog: string[] = [];
    for (let i = 0; i < BACKLOG; i++) backlog.push(await seedNotification(t, stuckAlert, "webhook", stuck.url));

    // Three rounds of timeouts first: by then the worker knows the receiver hangs.
    await waitFor("three rounds of timeouts at the hanging receiver", async () => (await attemptsAt(stuckAlert.alertId)) >= 3 * SLOTS, 30_000);
    const runsBefore = runsOf(backlog);
    const attemptsBefore = await attemptsAt(stuckAlert.alertId);

    // Meanwhile another receiver's webhooks: each goes out at its job's first run.
    const fine = healthy.route("/fine");
    const fineAlert = await seedAlert(t, { method: "webhook", webhookUrl: fine.url });
    fine.verifyWith(fineAlert.secret!);
    const others: string[] = [];
    for (let i = 0; i < 5; i++) others.push(await seedNotification(t, fineAlert, "webhook", fine.url));
    for (const id of others) expect((await waitForNotification(t, id, isFinished)).status).toBe("delivered");
    expect(fine.requests.map((request) => request.verifiedWith)).toEqual(others.map(() => [fineAlert.secret]));
    expect(others.map((id) => runs.get(id))).toEqual(others.map(() => 1));

    // The window: three more rounds of the hanging receiver's timeouts. With a fixed ~1 s
    // step-aside every job in the backlog ran about once per round (some 3 × 60 runs); here the
    // jobs come back at the receiver's pace.
    await waitFor("three more rounds of timeouts", async () => (await attemptsAt(stuckAlert.alertId)) >= attemptsBefore + 3 * SLOTS, 30_000);
    const runsInWindow = runsOf(backlog) - runsBefore;
    expect(runsInWindow).toBeLessThan(BACKLOG);

    // Nothing lost, each attempt counted once: a notification has at most its one attempt
    // (the retry is an hour away), recorded as many times as it was made, and none was made
    // that the receiver did not get.
    const rows = await t.deps.sql<Array<{ id: string; status: string; attemptCount: number; attempts: number }>>`
      select n.id, n.status, n.attempt_count as "attemptCount", (select count(*)::int from delivery_attempts a where a.notification_id = n.id) as attempts
      from notifications n where n.alert_id = ${stuckAlert.alertId}`;
    expect(rows).toHaveLength(BACKLOG);
    for (const row of rows) {
      expect(row.attempts, row.id).toBeLessThanOrEqual(1);
      // attempt_count counts the schedule's steps taken (retry-steps.ts): none before the first attempt.
      expect(row.attemptCount === 0, row.id).toBe(row.attempts === 0);
      expect(row.status, row.id).toBe(row.attempts === 0 ? "pending" : "retrying");
    }
    expect(rows.reduce((sum, row) => sum + row.attempts, 0)).toBeLessThanOrEqual(stuck.requests.length);

    // Each job still waits where the reconciler looks, also once its row has sat still past
    // the sweep's doubt (10 minutes): it re-enqueues none of them.
    const later = new Date(Date.now() + 11 * 60_000);
    expect((await runReconcileOnce({ ...t.deps, now: () => later }, { graceMs: 0 })).notifications).toBe(0);
  });
});
