// A redelivery commits the reopened notification before it queues its delivery. When that
// enqueue is lost (Redis unreachable from the API at that moment), the notification is pending
// with no live job, its old failed job still kept, and the reconciler's next sweep starts it
// afresh like any pending notification: it is sent once, under the same webhook-id.
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildApp, type AppInstance } from "../../src/http/app.ts";
import { runReconcileOnce } from "../../src/pipeline/reconcile.ts";
import { DELIVERY_QUEUE } from "../../src/queue/names.ts";
import { createQueues } from "../../src/queue/producers.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { isFinished, startDeliveryWorkers, waitForNotification, type DeliveryWorkers } from "../helpers/delivery.ts";
import { freePort } from "../helpers/ports.ts";
import { bearer, trackWallet } from "../helpers/seed.ts";
import { waitFor } from "../helpers/wait.ts";
import { startWebhookReceiver, type WebhookReceiver } from "../helpers/webhook-receiver.ts";

let t: TestApp;
let receiver: WebhookReceiver;
let workers: DeliveryWorkers;
let deadRedis: Redis;
/** The same API, whose queues sit on a Redis connection that cannot connect: every enqueue fails. */
let appWithoutQueues: AppInstance;

beforeAll(async () => {
  t = await startTestApp("redelivery-enqueue", { RETRY_SCHEDULE: "100ms" });
  receiver = await startWebhookReceiver();
  workers = startDeliveryWorkers(t, { webhookTimeoutMs: 2_000 });
  deadRedis = new Redis(`redis://127.0.0.1:${await freePort()}`, { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0, retryStrategy: () => null });
  deadRedis.on("error", () => {});
  const queues = createQueues(deadRedis, t.config.queuePrefix);
  for (const queue of Object.values(queues)) queue.on("error", () => {});
  appWithoutQueues = await buildApp({ ...t.deps, queues });
  await appWithoutQueues.ready();
});
afterAll(async () => {
  await appWithoutQueues?.close();
  deadRedis?.disconnect();
  await workers?.close();
  await receiver?.close();
  await t?.close();
});

describe("a redelivery whose enqueue is lost after its commit", () => {
  it("is answered 202, and the reconciler's next sweep sends the notification under the same webhook-id", async () => {
    const token = await t.token("alice");
    const wallet = await trackWallet(t, token);
    const route = receiver.route("/lost-enqueue");
    const created = await t.app.inject({
      method: "POST",
      url: "/v1/risk/alerts",
      headers: bearer(token),
      payload: { walletId: wallet.walletId, condition: "large_transfer", threshold: 100, notificationMethod: "webhook", webhookUrl: route.url },
    });
    const { alertId, webhookSecret } = created.json<{ alertId: string; webhookSecret: string }>();
    route.verifyWith(webhookSecret).respond({ status: 400, body: "misconfigured" });
    const test = await t.app.inject({ method: "POST", url: `/v1/risk/alerts/${alertId}/test`, headers: bearer(token) });
    const { notificationId } = test.json<{ notificationId: string }>();
    expect((await waitForNotification(t, notificationId, isFinished)).status).toBe("failed");
    const queue = t.deps.queues[DELIVERY_QUEUE.webhook];
    await waitFor("the job that failed it to be marked failed", async () => (await queue.getJobState(notificationId)) === "failed");

    const res = await appWithoutQueues.inject({ method: "POST", url: `/v1/notifications/${notificationId}/redeliver`, headers: bearer(token) });
    expect(res.statusCode).toBe(202);
    const [row] = await t.deps.sql<{ status: string }[]>`select status from notifications where id = ${notificationId}`;
    expect(row?.status).toBe("pending");
    // Nothing queued it: the job under its id is still the one that failed it.
    expect(await queue.getJobState(notificationId)).toBe("failed");

    const swept = await runReconcileOnce({ ...t.deps, now: () => new Date(Date.now() + 1_000) }, { graceMs: 0 });
    expect(swept.notifications).toBe(1);
    expect((await waitForNotification(t, notificationId, isFinished)).status).toBe("delivered");
    expect(route.requests).toHaveLength(2);
    expect(route.requests[1]!.headers["webhook-id"]).toBe(notificationId);
    expect(route.requests[1]!.verifiedWith).toEqual([webhookSecret]);
  });
});
