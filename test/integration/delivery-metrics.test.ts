// The worker counts each delivery attempt it records, by channel and outcome, for its /metrics:
// what an operator graphs and alerts on (deliveries, retries, given-up notifications) without
// a count over the notifications table, which only grows.
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDeliveryMetrics, createJobMetrics } from "../../src/metrics/index.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { isFinished, seedAlert, seedNotification, startDeliveryWorkers, waitForNotification, type DeliveryWorkers } from "../helpers/delivery.ts";
import { waitFor } from "../helpers/wait.ts";
import { startWebhookReceiver, type WebhookReceiver } from "../helpers/webhook-receiver.ts";

let t: TestApp;
let receiver: WebhookReceiver;
let workers: DeliveryWorkers;
const registry = new Registry();

beforeAll(async () => {
  t = await startTestApp("delivery-metrics", { RETRY_SCHEDULE: "100ms" });
  receiver = await startWebhookReceiver();
  workers = startDeliveryWorkers(t, { webhookTimeoutMs: 500 }, { deliveryMetrics: createDeliveryMetrics(registry, createJobMetrics(registry)) });
});
afterAll(async () => {
  await workers?.close();
  await receiver?.close();
  await t?.close();
});

const series = async (channel: string, outcome: string) =>
  Number(new RegExp(`^wallet_alerts_delivery_attempts_total\\{channel="${channel}",outcome="${outcome}"\\} (\\d+)$`, "m").exec(await registry.metrics())?.[1]);

describe("delivery attempt counters", () => {
  it("start at zero for every channel and outcome", async () => {
    for (const channel of ["webhook", "email", "sms"]) {
      for (const outcome of ["delivered", "retrying", "failed"]) expect(await series(channel, outcome)).toBe(0);
    }
  });

  it("count a retried delivery as one retrying and one delivered attempt, and a refused one as failed", async () => {
    const retried = receiver.route("/retried");
    retried.respond({ status: 503 });
    const refused = receiver.route("/refused");
    refused.respond({ status: 400 });
    const first = await seedAlert(t, { method: "webhook", webhookUrl: retried.url });
    const second = await seedAlert(t, { method: "webhook", webhookUrl: refused.url });
    retried.verifyWith(first.secret!);
    refused.verifyWith(second.secret!);

    const ids = [await seedNotification(t, first, "webhook", retried.url), await seedNotification(t, second, "webhook", refused.url)];
    const [delivered, failed] = await Promise.all(ids.map((id) => waitForNotification(t, id, isFinished)));
    expect([delivered!.status, failed!.status]).toEqual(["delivered", "failed"]);

    // The counter ticks just after the row is written: wait for it rather than race it.
    await waitFor("both finished attempts counted", async () => (await series("webhook", "delivered")) + (await series("webhook", "failed")) === 2);
    expect(await series("webhook", "delivered")).toBe(1);
    expect(await series("webhook", "retrying")).toBe(1);
    expect(await series("webhook", "failed")).toBe(1);
    expect(await series("email", "delivered")).toBe(0);
  });
});
