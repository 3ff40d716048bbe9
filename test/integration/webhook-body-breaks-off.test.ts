// A webhook receiver's answer is its status (2xx = delivered, DESIGN.md section 6); the body
// after it is only kept for the attempt log. A body that breaks off — the connection closed
// before Content-Length bytes came, or the body stalled past the timeout — must leave the
// status as it was: a 200 is delivered once (not POSTed again), a 400 stays permanent, a 503
// stays retryable. Real delivery workers, a real receiver on loopback.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DELIVERED_BODY_LIMIT } from "../../src/notify/channels/webhook.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import {
  attemptsOf,
  isFinished,
  seedAlert,
  seedNotification,
  startDeliveryWorkers,
  waitForNotification,
  type DeliveryWorkers,
} from "../helpers/delivery.ts";
import { startWebhookReceiver, type WebhookReceiver } from "../helpers/webhook-receiver.ts";

const TIMEOUT_MS = 500;
const BODY = "accepted ".repeat(400);
const HALF = BODY.slice(0, BODY.length / 2);
/** What is kept of a 2xx answer's half: its start (the body is read on, to where it broke off). */
const DELIVERED_START = BODY.slice(0, DELIVERED_BODY_LIMIT);

let t: TestApp;
let receiver: WebhookReceiver;
let workers: DeliveryWorkers;
let path = 0;

beforeAll(async () => {
  t = await startTestApp("webhook-body-breaks-off", { RETRY_SCHEDULE: "100ms,200ms" });
  receiver = await startWebhookReceiver();
  workers = startDeliveryWorkers(t, { webhookTimeoutMs: TIMEOUT_MS });
});
afterAll(async () => {
  await workers?.close();
  await receiver?.close();
  await t?.close();
});

/** A webhook notification to a receiver that answers `status` and breaks its body off; once it is finished. */
async function deliverTo(status: number, breakOff: "reset" | "stall") {
  const route = receiver.route(`/hook-${++path}`);
  const alert = await seedAlert(t, { method: "webhook", webhookUrl: route.url });
  route.verifyWith(alert.secret!);
  route.respond({ status, body: BODY, breakOff });
  const id = await seedNotification(t, alert, "webhook", route.url);
  const row = await waitForNotification(t, id, isFinished);
  return { row, requests: route.requests, attempts: await attemptsOf(t, id) };
}

describe("a webhook answer whose body breaks off after the status", () => {
  it("is delivered after one attempt when a 200's connection closes mid-body, keeping the start of the part that came", async () => {
    const { row, requests, attempts } = await deliverTo(200, "reset");
    expect(row).toMatchObject({ status: "delivered", attemptCount: 1 });
    expect(requests).toHaveLength(1);
    expect(attempts[0]).toMatchObject({ statusCode: 200, error: null });
    expect(attempts[0]!.responseBody).toMatch(new RegExp(`^${DELIVERED_START}\\n\\[the response body broke off: .+\\]$`));
  });

  it("is delivered after one attempt when a 200's body stalls, the read ending at the timeout", async () => {
    const { row, requests, attempts } = await deliverTo(200, "stall");
    expect(row).toMatchObject({ status: "delivered", attemptCount: 1 });
    expect(requests).toHaveLength(1);
    expect(attempts[0]).toMatchObject({ statusCode: 200, error: null });
    expect(attempts[0]!.responseBody).toBe(`${DELIVERED_START}\n[the response body broke off: no complete answer within ${TIMEOUT_MS} ms]`);
  });

  it("stays a permanent failure after one attempt when a 400's connection closes mid-body, keeping all that came", async () => {
    const { row, requests, attempts } = await deliverTo(400, "reset");
    expect(row).toMatchObject({ status: "failed", attemptCount: 1 });
    expect(requests).toHaveLength(1);
    expect(attempts[0]).toMatchObject({ statusCode: 400, error: "HTTP 400" });
    // Under RESPONSE_BODY_LIMIT, an error answer's half is kept whole.
    expect(attempts[0]!.responseBody).toMatch(new RegExp(`^${HALF}\\n\\[the response body broke off: .+\\]$`));
  });

  it("stays retryable, with its status in the attempt log, when a 503's connection closes mid-body", async () => {
    const { row, attempts } = await deliverTo(503, "reset");
    expect(row).toMatchObject({ status: "delivered", attemptCount: 2 });
    expect(attempts.map((a) => [a.statusCode, a.error])).toEqual([
      [503, "HTTP 503"],
      [200, null],
    ]);
  });
});
