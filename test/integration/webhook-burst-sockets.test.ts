// A burst to one receiver that answers slowly, but within the timeout: more attempts in flight to
// it than the 64 sockets per origin the webhook client used to allow. The attempts past 64 waited
// inside the client for a socket while their timeout ran, reached the receiver late and were
// recorded as timeouts although it answered each in time; their retries sent it the same
// webhook-id again (notify/safe-dispatcher.ts). Real peers: a loopback receiver, a real BullMQ
// worker running our delivery processor, PostgreSQL and Redis; the timeout is shortened to 3 s.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { enqueueDeliveries } from "../../src/queue/deliveries.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { attemptsOf, isFinished, seedAlert, seedNotification, startDeliveryWorkers, waitForNotification, type DeliveryWorkers } from "../helpers/delivery.ts";
import { startWebhookReceiver, type WebhookReceiver } from "../helpers/webhook-receiver.ts";

/** More than the 64 sockets per origin of before, all in flight at once. */
const BURST = 100;
const TIMEOUT_MS = 3_000;
/** Within the timeout, with room to spare; but a wait for another attempt's socket first would not be. */
const ANSWER_MS = 2_000;

let t: TestApp;
let receiver: WebhookReceiver;
let workers: DeliveryWorkers;

beforeAll(async () => {
  // A timed-out attempt would be retried a second later, so a duplicate would show within the test.
  t = await startTestApp("webhook-burst-sockets", { RETRY_SCHEDULE: "1s" });
  receiver = await startWebhookReceiver();
  // The receiver's share may take the whole burst at once, and so may the worker.
  workers = startDeliveryWorkers(t, { webhookTimeoutMs: TIMEOUT_MS }, { webhookAttemptsPerReceiver: BURST }, BURST);
});
afterAll(async () => {
  await workers?.close();
  await receiver?.close();
  await t?.close();
});

describe("a burst to a receiver that answers slowly but within the timeout", { timeout: 60_000 }, () => {
  it("records no attempt as a timeout and sends no webhook-id twice, with more attempts in flight than the old 64 sockets", async () => {
    const route = receiver.route("/slow").respond(...Array.from({ length: BURST }, () => ({ status: 200, body: "ok", afterMs: ANSWER_MS })));
    const alert = await seedAlert(t, { method: "webhook", webhookUrl: route.url });
    const ids: string[] = [];
    for (let i = 0; i < BURST; i++) ids.push(await seedNotification(t, alert, "webhook", route.url, { enqueue: false }));
    await enqueueDeliveries(t.deps.queues, ids.map((notificationId) => ({ notificationId, channel: "webhook" as const })));

    for (const id of ids) expect((await waitForNotification(t, id, isFinished, 30_000)).status).toBe("delivered");
    const attempts = (await Promise.all(ids.map((id) => attemptsOf(t, id)))).flat();
    expect(attempts.filter((attempt) => attempt.error !== null)).toEqual([]);
    expect(attempts).toHaveLength(BURST);
    const webhookIds = route.requests.map((request) => request.headers["webhook-id"]);
    expect(new Set(webhookIds).size).toBe(BURST);
    expect(webhookIds).toHaveLength(BURST);
  });
});
