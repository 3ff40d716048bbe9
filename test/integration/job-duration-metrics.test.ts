// wallet_alerts_job_duration_seconds sees every run of a job: a delivery attempt that will be
// retried ends with its job parked in BullMQ's delayed set (moveToDelayed + DelayedError),
// which emits neither completed nor failed, so the slow and refusing receivers an operator
// most needs to see were missing from it.
import { Queue, Worker } from "bullmq";
import { Registry } from "prom-client";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createDeliveryMetrics, createJobMetrics, WORKER_METRICS_OPTIONS } from "../../src/metrics/index.ts";
import { createWorkerRedis } from "../../src/redis.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { uniqueQueuePrefix } from "../helpers/db.ts";
import { attemptsOf, seedAlert, seedNotification, startDeliveryWorkers, waitForNotification, type DeliveryWorkers } from "../helpers/delivery.ts";
import { TEST_REDIS_URL } from "../helpers/env.ts";
import { waitFor } from "../helpers/wait.ts";
import { startWebhookReceiver, type WebhookReceiver } from "../helpers/webhook-receiver.ts";

let t: TestApp;
let receiver: WebhookReceiver;
let workers: DeliveryWorkers;
const registry = new Registry();

beforeAll(async () => {
  // Three attempts: the first two are retried, the third is the last.
  t = await startTestApp("job-duration-metrics", { RETRY_SCHEDULE: "100ms,100ms" });
  receiver = await startWebhookReceiver();
  // As the worker process does: the same registry for both, the delivery metrics given the job metrics.
  const jobMetrics = createJobMetrics(registry);
  workers = startDeliveryWorkers(t, { webhookTimeoutMs: 500 }, { deliveryMetrics: createDeliveryMetrics(registry, jobMetrics) });
  for (const worker of workers.workers) jobMetrics.watch(worker);
});
afterAll(async () => {
  await workers?.close();
  await receiver?.close();
  await t?.close();
});

/** The histogram's count for a queue and outcome (0 while the series does not exist). */
async function runs(queue: string, outcome: string, from: Registry = registry): Promise<number> {
  const pattern = new RegExp(`^wallet_alerts_job_duration_seconds_count\\{queue="${queue}",outcome="${outcome}"\\} (\\d+)$`, "m");
  return Number(pattern.exec(await from.metrics())?.[1] ?? 0);
}

it("observes every delivery attempt's run, the ones that will be retried included", async () => {
  const refusing = receiver.route("/refusing").respond({ status: 500 }, { status: 500 }, { status: 500 });
  const alert = await seedAlert(t, { method: "webhook", webhookUrl: refusing.url });
  refusing.verifyWith(alert.secret!);

  const id = await seedNotification(t, alert, "webhook", refusing.url);
  expect((await waitForNotification(t, id, (row) => row.status === "failed")).attemptCount).toBe(3);
  expect(await attemptsOf(t, id)).toHaveLength(3);

  // The last run is observed when BullMQ reports it failed, just after the row is written.
  await waitFor("the given-up run observed", async () => (await runs("deliver-webhook", "failed")) === 1);
  expect({
    retrying: await runs("deliver-webhook", "retrying"),
    failed: await runs("deliver-webhook", "failed"),
    completed: await runs("deliver-webhook", "completed"),
  }).toEqual({ retrying: 2, failed: 1, completed: 0 });
  // Each run waited on the receiver: none took no time at all.
  const sum = Number(/^wallet_alerts_job_duration_seconds_sum\{queue="deliver-webhook",outcome="retrying"\} (\S+)$/m.exec(await registry.metrics())?.[1]);
  expect(sum).toBeGreaterThan(0);
});

it("counts a run that threw with attempts left as retrying, and the last one as failed", async () => {
  const prefix = uniqueQueuePrefix("job-duration-retried-throw");
  const producer = createWorkerRedis(TEST_REDIS_URL);
  const consumer = createWorkerRedis(TEST_REDIS_URL);
  const queue = new Queue("scratch-throws", { connection: producer, prefix });
  const worker = new Worker(
    "scratch-throws",
    async (): Promise<void> => {
      throw new Error("PostgreSQL is away");
    },
    { connection: consumer, prefix, ...WORKER_METRICS_OPTIONS },
  );
  const own = new Registry();
  createJobMetrics(own).watch(worker);
  try {
    await queue.add("job", {}, { attempts: 2 });
    await waitFor("a given-up run observed", async () => (await runs("scratch-throws", "failed", own)) >= 1);
    expect({ retrying: await runs("scratch-throws", "retrying", own), failed: await runs("scratch-throws", "failed", own) }).toEqual({ retrying: 1, failed: 1 });
  } finally {
    await worker.close();
    await queue.obliterate({ force: true });
    await queue.close();
    producer.disconnect();
    consumer.disconnect();
  }
});
