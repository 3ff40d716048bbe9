import type { Queue } from "bullmq";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deleteAlert } from "../../src/db/queries/alerts.ts";
import { createDeliveryStore } from "../../src/db/queries/deliveries.ts";
import { DELIVERED_BODY_LIMIT, RESPONSE_BODY_LIMIT } from "../../src/notify/channels/webhook.ts";
import { alerts, notifications } from "../../src/db/schema.ts";
import { makeDeliverProcessor } from "../../src/queue/jobs/deliver.ts";
import { enqueueDeliveries } from "../../src/queue/deliveries.ts";
import { DELIVERY_QUEUE, type DeliverJob } from "../../src/queue/names.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { failingFor } from "../helpers/failure-run.ts";
import {
  alertRow,
  attemptsOf,
  isFinished,
  seedAlert,
  seedNotification,
  startDeliveryWorkers,
  waitForNotification,
  type DeliveryWorkers,
} from "../helpers/delivery.ts";
import { waitFor } from "../helpers/wait.ts";
import { startWebhookReceiver, type WebhookReceiver } from "../helpers/webhook-receiver.ts";

let t: TestApp;
let receiver: WebhookReceiver;
let workers: DeliveryWorkers;
let path = 0;

beforeAll(async () => {
  t = await startTestApp("webhook-delivery", { RETRY_SCHEDULE: "100ms,200ms" });
  receiver = await startWebhookReceiver();
  // The receiver shares this process: a short timeout would turn a stalled answer into a retry.
  workers = startDeliveryWorkers(t, { webhookTimeoutMs: 5_000 });
});
afterAll(async () => {
  await workers?.close();
  await receiver?.close();
  await t?.close();
});

/** A fresh receiver path and a webhook alert pointing at it, verified with the alert's secret. */
async function webhookAlert() {
  const route = receiver.route(`/hook-${++path}`);
  const alert = await seedAlert(t, { method: "webhook", webhookUrl: route.url });
  route.verifyWith(alert.secret!);
  return { route, alert };
}

describe("webhook delivery", () => {
  it("retries a 503 and delivers on the next attempt with the same webhook-id", async () => {
    const { route, alert } = await webhookAlert();
    route.respond({ status: 503, body: "busy" });
    const id = await seedNotification(t, alert, "webhook", route.url);

    const row = await waitForNotification(t, id, isFinished);
    expect(row.status).toBe("delivered");
    expect(row.attemptCount).toBe(2);
    expect(row.deliveredAt).not.toBeNull();

    expect(route.requests).toHaveLength(2);
    expect(route.requests.map((r) => r.headers["webhook-id"])).toEqual([id, id]);
    for (const request of route.requests) {
      expect(request.verifiedWith).toEqual([alert.secret]);
      expect(request.headers["user-agent"]).toBe("wallet-alerts/1.0");
      expect(request.headers["content-type"]).toBe("application/json");
      expect(JSON.parse(request.body)).toMatchObject({ type: "risk_alert.triggered", data: { alertId: alert.alertId } });
    }

    const attempts = await attemptsOf(t, id);
    expect(attempts.map((a) => [a.statusCode, a.error])).toEqual([
      [503, "HTTP 503"],
      [200, null],
    ]);
    expect(attempts[0]!.responseBody).toBe("busy");
  });

  it("sends a retry to the alert's new webhookUrl once its owner changes it, with the same webhook-id", async () => {
    const { route: broken, alert } = await webhookAlert();
    broken.respond({ status: 429, headers: { "retry-after": "2" } });
    const fixed = receiver.route(`/hook-${++path}`).verifyWith(alert.secret!);
    const id = await seedNotification(t, alert, "webhook", broken.url);
    await waitForNotification(t, id, (row) => row.status === "retrying");

    const token = await t.token(alert.owner, "alerts:write alerts:read");
    const patched = await t.app.inject({
      method: "PATCH",
      url: `/v1/risk/alerts/${alert.alertId}`,
      headers: { authorization: `Bearer ${token}` },
      payload: { webhookUrl: fixed.url },
    });
    expect(patched.statusCode).toBe(200);

    const row = await waitForNotification(t, id, isFinished);
    expect(row.status).toBe("delivered");
    expect(broken.requests).toHaveLength(1);
    expect(fixed.requests.map((r) => [r.headers["webhook-id"], r.verifiedWith])).toEqual([[id, [alert.secret]]]);
    // The notification's row says where it went last.
    const [stored] = await t.deps.db.select({ destination: notifications.destination }).from(notifications).where(eq(notifications.id, id));
    expect(stored?.destination).toBe(fixed.url);
  });

  it("gives up after exactly one attempt on a 400", async () => {
    const { route, alert } = await webhookAlert();
    route.respond({ status: 400, body: "bad payload" });
    const id = await seedNotification(t, alert, "webhook", route.url);

    const row = await waitForNotification(t, id, isFinished);
    expect(row.status).toBe("failed");
    expect(row.attemptCount).toBe(1);
    expect(route.requests).toHaveLength(1);
    const [attempt] = await attemptsOf(t, id);
    expect(attempt).toMatchObject({ statusCode: 400, error: "HTTP 400", responseBody: "bad payload" });
    // A single permanent failure starts the alert's failure run but does not disable it.
    const alertState = await alertRow(t, alert.alertId);
    expect(alertState.status).toBe("active");
    expect(alertState.failingSince).not.toBeNull();
  });

  it("waits at least as long as a 429's Retry-After before trying again", async () => {
    const { route, alert } = await webhookAlert();
    route.respond({ status: 429, headers: { "retry-after": "1" } });
    const id = await seedNotification(t, alert, "webhook", route.url);

    const retrying = await waitForNotification(t, id, (row) => row.status === "retrying");
    const [first] = await attemptsOf(t, id);
    // The schedule says ~100 ms; the receiver asked for 1 s and gets at least that.
    expect(retrying.nextAttemptAt!.getTime() - first!.at.getTime()).toBeGreaterThanOrEqual(1_000);

    const row = await waitForNotification(t, id, isFinished);
    expect(row.status).toBe("delivered");
    expect(route.requests).toHaveLength(2);
  });

  it("does not follow a redirect and fails the notification", async () => {
    const { route, alert } = await webhookAlert();
    const target = receiver.route(`/redirect-target-${path}`);
    route.respond({ status: 302, headers: { location: target.url } });
    const id = await seedNotification(t, alert, "webhook", route.url);

    const row = await waitForNotification(t, id, isFinished);
    expect(row.status).toBe("failed");
    expect(target.requests).toHaveLength(0);
    const attempts = await attemptsOf(t, id);
    expect(attempts).toHaveLength(1);
    expect(attempts[0]!.statusCode).toBe(302);
    expect(attempts[0]!.error).toContain("redirects are not followed");
  });

  it("fails after the schedule is exhausted: one attempt plus one per scheduled delay", async () => {
    const { route, alert } = await webhookAlert();
    route.respond({ status: 500 }, { status: 502 }, { status: 503 }, { status: 200 });
    const id = await seedNotification(t, alert, "webhook", route.url);

    const row = await waitForNotification(t, id, isFinished);
    expect(row.status).toBe("failed");
    expect(row.attemptCount).toBe(3);
    expect(route.requests).toHaveLength(3);
    const attempts = await attemptsOf(t, id);
    expect(attempts[2]!.error).toBe("HTTP 503 (gave up after 3 attempts)");
  });

  it("disables the alert when the receiver answers 410 Gone", async () => {
    const { route, alert } = await webhookAlert();
    route.respond({ status: 410 });
    const id = await seedNotification(t, alert, "webhook", route.url);

    expect((await waitForNotification(t, id, isFinished)).status).toBe("failed");
    // The alert is disabled in a statement of its own (just before the attempt is recorded), so it is waited for.
    const alertState = await waitFor("the alert to be disabled", async () => {
      const row = await alertRow(t, alert.alertId);
      return row.status === "disabled" && row;
    });
    expect(alertState.disabledReason).toBe("the webhook endpoint answered 410 Gone");
  });

  it("disables an alert whose notifications have failed for 24 hours straight", async () => {
    const { route, alert } = await webhookAlert();
    await failingFor(t, alert.alertId);
    route.respond({ status: 400 });
    const id = await seedNotification(t, alert, "webhook", route.url);

    expect((await waitForNotification(t, id, isFinished)).status).toBe("failed");
    const alertState = await waitFor("the alert to be disabled", async () => {
      const row = await alertRow(t, alert.alertId);
      return row.status === "disabled" && row;
    });
    expect(alertState.disabledReason).toMatch(/^its notifications failed from \S+ to \S+, none delivered, with no more than 24 hours between one failure and the next$/);
  });

  it("never disables a paused alert on a 410 Gone, nor starts a failure run for it, so its owner gets no disabled notice", async () => {
    const { route, alert } = await webhookAlert();
    await t.deps.db.update(alerts).set({ status: "paused" }).where(eq(alerts.id, alert.alertId));
    route.respond({ status: 410 }); // the receiver, down for maintenance
    const id = await seedNotification(t, alert, "webhook", route.url);

    expect((await waitForNotification(t, id, isFinished)).status).toBe("failed");
    const row = await alertRow(t, alert.alertId);
    expect(row).toMatchObject({ status: "paused", disabledReason: null, disabledAt: null, disabledNoticeOwed: false, failingSince: null });
  });

  it("never disables a paused alert whose notifications have failed for 24 hours straight", async () => {
    const { route, alert } = await webhookAlert();
    const dayAndAnHourAgo = new Date(Date.now() - 25 * 3_600_000);
    await t.deps.db.update(alerts).set({ status: "paused", failingSince: dayAndAnHourAgo }).where(eq(alerts.id, alert.alertId));
    route.respond({ status: 400 });
    const id = await seedNotification(t, alert, "webhook", route.url);

    expect((await waitForNotification(t, id, isFinished)).status).toBe("failed");
    const row = await alertRow(t, alert.alertId);
    expect(row).toMatchObject({ status: "paused", disabledReason: null, disabledNoticeOwed: false, failingSince: dayAndAnHourAgo });
  });

  it("clears the alert's failure run on a delivery", async () => {
    const { route, alert } = await webhookAlert();
    await t.deps.db.update(alerts).set({ failingSince: new Date(Date.now() - 3_600_000) }).where(eq(alerts.id, alert.alertId));
    const id = await seedNotification(t, alert, "webhook", route.url);

    expect((await waitForNotification(t, id, isFinished)).status).toBe("delivered");
    expect((await alertRow(t, alert.alertId)).failingSince).toBeNull();
  });

  it("does not send a disabled alert's pending notifications, but still sends its test notifications", async () => {
    const { route, alert } = await webhookAlert();
    await t.deps.db.update(alerts).set({ status: "disabled", disabledReason: "test" }).where(eq(alerts.id, alert.alertId));
    const triggered = await seedNotification(t, alert, "webhook", route.url);
    const test = await seedNotification(t, alert, "webhook", route.url, { type: "risk_alert.test" });

    expect((await waitForNotification(t, triggered, isFinished)).status).toBe("failed");
    expect((await waitForNotification(t, test, isFinished)).status).toBe("delivered");
    expect(await attemptsOf(t, triggered)).toHaveLength(0);
    expect(route.requests.map((r) => r.headers["webhook-id"])).toEqual([test]);
    // Its job ends failed, saying why: a completed one would read as sent (in Bull Board, in the job metrics).
    const queue = t.deps.queues["deliver-webhook"];
    expect(await waitFor("the job to end", async () => (await queue.getJobState(triggered)) === "failed")).toBe(true);
    expect((await queue.getJob(triggered))?.failedReason).toMatch(new RegExp(`^notification ${triggered} was not sent: its alert was disabled`));
  });

  it("keeps only the first 2 KiB of a large error answer", async () => {
    const { route, alert } = await webhookAlert();
    route.respond({ status: 400, body: "x".repeat(200 * 1024) });
    const id = await seedNotification(t, alert, "webhook", route.url);

    await waitForNotification(t, id, isFinished);
    const [attempt] = await attemptsOf(t, id);
    expect(RESPONSE_BODY_LIMIT).toBe(2 * 1024);
    expect(attempt!.responseBody).toBe("x".repeat(RESPONSE_BODY_LIMIT));
  });

  it("cuts a kept answer between characters, never inside one", async () => {
    const { route, alert } = await webhookAlert();
    // Three bytes each: 2 KiB ends two bytes into the 683rd.
    route.respond({ status: 400, body: "€".repeat(1000) });
    const id = await seedNotification(t, alert, "webhook", route.url);

    await waitForNotification(t, id, isFinished);
    const [attempt] = await attemptsOf(t, id);
    expect(attempt!.responseBody).toBe("€".repeat(Math.floor(RESPONSE_BODY_LIMIT / 3)));
  });

  it("keeps only the first 256 bytes of a 2xx answer", async () => {
    const { route, alert } = await webhookAlert();
    route.respond({ status: 200, body: "y".repeat(10 * 1024) });
    const id = await seedNotification(t, alert, "webhook", route.url);

    expect((await waitForNotification(t, id, isFinished)).status).toBe("delivered");
    const [attempt] = await attemptsOf(t, id);
    expect(DELIVERED_BODY_LIMIT).toBe(256);
    expect(attempt).toMatchObject({ statusCode: 200, error: null, responseBody: "y".repeat(DELIVERED_BODY_LIMIT) });
  });

  it("stops reading an answer that never ends, keeping its start, rather than reading on until the timeout", async () => {
    const { route, alert } = await webhookAlert();
    route.respond({ status: 200, endless: "z".repeat(1024) }, { status: 400, endless: "w".repeat(1024) });
    const delivered = await seedNotification(t, alert, "webhook", route.url);
    expect((await waitForNotification(t, delivered, isFinished)).status).toBe("delivered");
    const refused = await seedNotification(t, alert, "webhook", route.url);
    expect((await waitForNotification(t, refused, isFinished)).status).toBe("failed");

    // Read on, each would have ended at the 5 s timeout, its body marked as broken off.
    expect((await attemptsOf(t, delivered)).map((a) => a.responseBody)).toEqual(["z".repeat(DELIVERED_BODY_LIMIT)]);
    expect((await attemptsOf(t, refused)).map((a) => a.responseBody)).toEqual(["w".repeat(RESPONSE_BODY_LIMIT)]);
  });

  it("reads a 2xx answer of a few KiB to its end, past what it keeps, so the next attempt to the receiver reuses the connection", async () => {
    // A receiver of its own: its connections carry nobody else's requests.
    const own = await startWebhookReceiver();
    try {
      const route = own.route("/hook");
      const alert = await seedAlert(t, { method: "webhook", webhookUrl: route.url });
      // In two parts, the second after the first 256 bytes were read: all of it must be read.
      const answer = { status: 200, body: "p".repeat(8 * 1024), inTwoParts: true } as const;
      route.verifyWith(alert.secret!).respond(answer, answer);
      for (let i = 0; i < 2; i++) {
        const id = await seedNotification(t, alert, "webhook", route.url);
        expect((await waitForNotification(t, id, isFinished)).status).toBe("delivered");
      }
      expect(route.requests).toHaveLength(2);
      expect(route.requests[1]!.remotePort).toBe(route.requests[0]!.remotePort);
    } finally {
      await own.close();
    }
  });

  it("signs with the old and the new secret for 24 hours after a rotation", async () => {
    const { route, alert } = await webhookAlert();
    const token = await t.token(alert.owner);
    const res = await t.app.inject({
      method: "POST",
      url: `/v1/risk/alerts/${alert.alertId}/rotate-secret`,
      headers: { authorization: `Bearer ${token}` },
    });
    expect(res.statusCode).toBe(200);
    const { webhookSecret } = res.json<{ webhookSecret: string }>();
    route.verifyWith(webhookSecret);
    const id = await seedNotification(t, alert, "webhook", route.url);

    expect((await waitForNotification(t, id, isFinished)).status).toBe("delivered");
    const [request] = route.requests;
    expect(String(request!.headers["webhook-signature"]).split(" ")).toHaveLength(2);
    expect(request!.verifiedWith.sort()).toEqual([alert.secret, webhookSecret].sort());
  });

  it("skips a notification that is already delivered when its job runs again", async () => {
    const { route, alert } = await webhookAlert();
    const id = await seedNotification(t, alert, "webhook", route.url);
    await waitForNotification(t, id, isFinished);
    expect(route.requests).toHaveLength(1);

    const processor = makeDeliverProcessor({ ...t.deps, channels: workers.channels }, "webhook");
    await processor({ data: { notificationId: id } } as never);
    expect(route.requests).toHaveLength(1);
    expect((await attemptsOf(t, id)).length).toBe(1);
  });

  it("fails a failed notification's job again, sending nothing, when an operator re-runs it, instead of showing it completed", async () => {
    const { route, alert } = await webhookAlert();
    route.respond({ status: 400, body: "bad payload" });
    const id = await seedNotification(t, alert, "webhook", route.url);
    expect((await waitForNotification(t, id, isFinished)).status).toBe("failed");
    const queue = t.deps.queues[DELIVERY_QUEUE.webhook] as Queue<DeliverJob>;
    await waitFor("the job to fail", async () => (await queue.getJobState(id)) === "failed");
    expect((await queue.getJob(id))?.failedReason).toBe("HTTP 400");

    // The receiver is mended (it answers 200 from now on) and the job re-run as a script would:
    // Bull Board refuses a Retry on this queue (admin.test.ts).
    const retriedAt = Date.now();
    await (await queue.getJob(id))!.retry("failed");
    const job = await waitFor("the re-run to end", async () => {
      const state = await queue.getJobState(id);
      const current = await queue.getJob(id);
      return (state === "failed" || state === "completed") && (current?.finishedOn ?? 0) >= retriedAt && { state, current };
    });

    expect(job.state).toBe("failed");
    expect(job.current?.failedReason).toBe(`notification ${id} had already failed; nothing was sent (its owner sends it again with POST /v1/notifications/${id}/redeliver)`);
    expect(route.requests).toHaveLength(1);
    expect((await attemptsOf(t, id)).length).toBe(1);
    expect((await waitForNotification(t, id, () => true)).status).toBe("failed");
  });

  it("puts a re-created job back to sleep until the notification's next attempt is due", async () => {
    const { route, alert } = await webhookAlert();
    const id = await seedNotification(t, alert, "webhook", route.url, { enqueue: false });
    const due = new Date(Date.now() + 3_600_000);
    await t.deps.db.update(notifications).set({ status: "retrying", attemptCount: 1, nextAttemptAt: due }).where(eq(notifications.id, id));
    // As the reconciler would after a Redis flush: a fresh job for an open notification.
    await enqueueDeliveries(t.deps.queues, [{ notificationId: id, channel: "webhook" }]);

    const queue = t.deps.queues[DELIVERY_QUEUE.webhook] as Queue<DeliverJob>;
    await waitFor("the job to be put back to sleep", async () => (await queue.getJobState(id)) === "delayed");
    // Due at the notification's next attempt exactly: BullMQ scores a delayed job by its due
    // time in ms times 0x1000, plus a counter for jobs due in the same ms.
    const score = Number(await t.deps.redis.zscore(queue.keys.delayed!, id));
    expect(Math.floor(score / 0x1000)).toBe(due.getTime());
    expect(route.requests).toHaveLength(0);
    await (await queue.getJob(id))!.remove();
  });

  it("records the other attempts of a statement when one notification's alert was deleted while it was in flight", async () => {
    const { route: goneRoute, alert: gone } = await webhookAlert();
    const { route, alert } = await webhookAlert();
    const goneId = await seedNotification(t, gone, "webhook", goneRoute.url, { enqueue: false });
    const id = await seedNotification(t, alert, "webhook", route.url, { enqueue: false });
    // Deleted as the API deletes it (archived first: the database refuses an unarchived delete).
    expect(await deleteAlert(t.deps.sql, gone.owner, gone.alertId, gone.owner)).toEqual({ kind: "deleted" });

    // Two jobs of one worker finishing in the same tick share one recording statement.
    const store = createDeliveryStore(t.deps.sql);
    const delivered = (notificationId: string, alertId: string, destination: string) =>
      store.record({ notificationId, alertId, destination, at: new Date(), durationMs: 5, statusCode: 200, error: null, responseBody: "ok", status: "delivered", nextAttemptAt: null });
    const [goneRecorded, recorded] = await Promise.all([delivered(goneId, gone.alertId, goneRoute.url), delivered(id, alert.alertId, route.url)]);

    expect(goneRecorded).toBe(false);
    expect(recorded).toBe(true);
    const [row] = await t.deps.db.select().from(notifications).where(eq(notifications.id, id));
    expect(row).toMatchObject({ status: "delivered", attemptCount: 1 });
    expect((await attemptsOf(t, id)).map((a) => a.statusCode)).toEqual([200]);
  });
});

// A timeout of its own, short enough to wait out: the other tests' 5 s would make this one slow.
describe("webhook delivery to a receiver that never answers", () => {
  let short: TestApp;
  let shortReceiver: WebhookReceiver;
  let shortWorkers: DeliveryWorkers;

  beforeAll(async () => {
    short = await startTestApp("webhook-timeout", { RETRY_SCHEDULE: "100ms,200ms" });
    shortReceiver = await startWebhookReceiver();
    shortWorkers = startDeliveryWorkers(short, { webhookTimeoutMs: 2_000 });
  });
  afterAll(async () => {
    await shortReceiver?.close(); // ends a hung attempt, so the workers can stop
    await shortWorkers?.close();
    await short?.close();
  });

  it("times out and retries", async () => {
    const route = shortReceiver.route("/hang");
    const alert = await seedAlert(short, { method: "webhook", webhookUrl: route.url });
    route.verifyWith(alert.secret!);
    route.respond({ hang: true });
    const id = await seedNotification(short, alert, "webhook", route.url);

    const row = await waitForNotification(short, id, isFinished);
    expect(row.status).toBe("delivered");
    const attempts = await attemptsOf(short, id);
    expect(attempts).toHaveLength(2);
    expect(attempts[0]!.statusCode).toBeNull();
    expect(attempts[0]!.error).toContain("no complete answer within 2000 ms");
  });
});

// Worker slots are taken first in, first out: without a cap per receiver, a burst to one
// receiver that hangs fills them all until the timeout and everyone else's webhooks wait.
describe("a receiver that hangs", () => {
  let fair: TestApp;
  let hanging: WebhookReceiver;
  let healthy: WebhookReceiver;
  let fairWorkers: DeliveryWorkers;

  beforeAll(async () => {
    fair = await startTestApp("webhook-fairness", { RETRY_SCHEDULE: "100ms" });
    // Two addresses: a receiver is an address (or a domain), whatever its port.
    [hanging, healthy] = await Promise.all([startWebhookReceiver(), startWebhookReceiver({ host: "127.0.0.2" })]);
    // Five slots, two of them at most for one receiver; a timeout far beyond the test's wait.
    // Every name resolves to the hanging receiver's address.
    fairWorkers = startDeliveryWorkers(fair, { webhookTimeoutMs: 60_000, resolve: async () => ["127.0.0.1"] }, { webhookAttemptsPerReceiver: 2 });
  });
  afterAll(async () => {
    await hanging?.close(); // ends the hung attempts, so the workers can stop
    await fairWorkers?.close();
    await healthy?.close();
    await fair?.close();
  });

  it("holds at most its own share of the slots, so other receivers' webhooks still go out", async () => {
    const stuck = hanging.route("/stuck").respond(...Array.from({ length: 8 }, () => ({ hang: true as const })));
    const stuckAlert = await seedAlert(fair, { method: "webhook", webhookUrl: stuck.url });
    for (let i = 0; i < 8; i++) await seedNotification(fair, stuckAlert, "webhook", stuck.url);
    await waitFor("the hanging receiver's first attempts", async () => stuck.requests.length >= 2);

    const fine = healthy.route("/fine");
    const fineAlert = await seedAlert(fair, { method: "webhook", webhookUrl: fine.url });
    fine.verifyWith(fineAlert.secret!);
    const id = await seedNotification(fair, fineAlert, "webhook", fine.url);
    expect((await waitForNotification(fair, id, isFinished)).status).toBe("delivered");
    expect(fine.requests[0]!.verifiedWith).toEqual([fineAlert.secret]);
    // The others wait their turn without an attempt made or counted.
    expect(stuck.requests).toHaveLength(2);
  });

  it("holds its share however many names of its domain, letter cases or trailing dots it is reached by", async () => {
    const stuck = hanging.route("/tarpit").respond(...Array.from({ length: 9 }, () => ({ hang: true as const })));
    const names = ["a.tarpit.example", "B.TARPIT.example", "c.tarpit.example."];
    for (const name of names) {
      const url = `http://${name}:${hanging.port}/tarpit`;
      const alert = await seedAlert(fair, { method: "webhook", webhookUrl: url });
      for (let i = 0; i < 3; i++) await seedNotification(fair, alert, "webhook", url);
    }
    await waitFor("the tarpit's first attempts", async () => stuck.requests.length >= 2);

    const fine = healthy.route("/fine-too");
    const fineAlert = await seedAlert(fair, { method: "webhook", webhookUrl: fine.url });
    const id = await seedNotification(fair, fineAlert, "webhook", fine.url);
    expect((await waitForNotification(fair, id, isFinished)).status).toBe("delivered");
    // Two slots for the whole domain: "a.", "b." and "c." would each have had two (all five).
    expect(stuck.requests).toHaveLength(2);
  });
});
