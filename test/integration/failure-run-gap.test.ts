// An alert's run of permanent failures (notify/alert-health.ts) goes on only while each failure
// comes at most 24 h after the one before; one more than 24 h after it starts a new run, and a
// delivery still ends it. Before, a failure on Monday and the next on Wednesday, with nothing
// sent in between (a quiet wallet), disabled the alert at once, "24 hours of failures" after
// two notifications. Real deliveries to a loopback receiver, on a clock the test moves (the
// worker's deps.now dates each attempt, the failure run and the notification's record alike).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { recordPermanentFailure } from "../../src/notify/alert-health.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import {
  alertRow,
  isFinished,
  seedAlert,
  seedNotification,
  startDeliveryWorkers,
  waitForNotification,
  type DeliveryWorkers,
  type SeededAlert,
} from "../helpers/delivery.ts";
import { startWebhookReceiver, type Route, type WebhookReceiver } from "../helpers/webhook-receiver.ts";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** Monday 2026-11-23 10:00 UTC. */
const MONDAY = Date.parse("2026-11-23T10:00:00.000Z");

let t: TestApp;
let receiver: WebhookReceiver;
let workers: DeliveryWorkers;
let clock = MONDAY;
let path = 0;

beforeAll(async () => {
  t = await startTestApp("failure-run-gap", {}, { now: () => new Date(clock) });
  receiver = await startWebhookReceiver();
  workers = startDeliveryWorkers(t, { webhookTimeoutMs: 5_000 });
});
afterAll(async () => {
  await workers?.close();
  await receiver?.close();
  await t?.close();
});

async function webhookAlert(): Promise<{ alert: SeededAlert; route: Route }> {
  const route = receiver.route(`/run-${++path}`);
  return { alert: await seedAlert(t, { method: "webhook", webhookUrl: route.url }), route };
}

/** At `at` on the test's clock, one notification of the alert gets `status` from its receiver; resolves once it is recorded. */
async function notifyAt(at: number, target: { alert: SeededAlert; route: Route }, status: number): Promise<void> {
  clock = at;
  target.route.respond({ status });
  const id = await seedNotification(t, target.alert, "webhook", target.route.url);
  const row = await waitForNotification(t, id, isFinished);
  expect(row.status).toBe(status < 300 ? "delivered" : "failed");
}

const iso = (ms: number) => new Date(ms).toISOString().replace(".000Z", "Z");

describe("an alert's failure run", () => {
  it("starts again at a failure more than 24 h after the previous one: Monday's 404 and one a day and a millisecond later do not disable it", async () => {
    const target = await webhookAlert();
    await notifyAt(MONDAY, target, 404);
    expect(await alertRow(t, target.alert.alertId)).toMatchObject({ status: "active", failingSince: new Date(MONDAY) });

    await notifyAt(MONDAY + DAY + 1, target, 404);
    expect(await alertRow(t, target.alert.alertId)).toMatchObject({ status: "active", failingSince: new Date(MONDAY + DAY + 1), disabledReason: null });
  });

  it("goes on at a failure exactly 24 h after the previous one, and disables the alert saying what happened", async () => {
    const target = await webhookAlert();
    await notifyAt(MONDAY, target, 404);
    await notifyAt(MONDAY + DAY, target, 404);

    const row = await alertRow(t, target.alert.alertId);
    expect(row).toMatchObject({ status: "disabled", failingSince: new Date(MONDAY), disabledAt: new Date(MONDAY + DAY) });
    expect(row.disabledReason).toBe(
      `its notifications failed from ${iso(MONDAY)} to ${iso(MONDAY + DAY)}, none delivered, with no more than 24 hours between one failure and the next`,
    );
  });

  it("goes on through failures each within 24 h of the one before, from the first after a delivery, and disables the alert 24 h into it", async () => {
    const target = await webhookAlert();
    await notifyAt(MONDAY, target, 404);
    await notifyAt(MONDAY + HOUR, target, 200); // a delivery ends the run
    expect((await alertRow(t, target.alert.alertId)).failingSince).toBeNull();
    await notifyAt(MONDAY + 2 * HOUR, target, 400);
    await notifyAt(MONDAY + 25 * HOUR, target, 400); // 23 h after the previous one: 23 h into the run
    expect(await alertRow(t, target.alert.alertId)).toMatchObject({ status: "active", failingSince: new Date(MONDAY + 2 * HOUR) });
    // 47 h after Monday's first failure, 24 h after the run's second began, 1 h after the last one.
    await notifyAt(MONDAY + 26 * HOUR, target, 400);

    const row = await alertRow(t, target.alert.alertId);
    expect(row).toMatchObject({ status: "disabled", failingSince: new Date(MONDAY + 2 * HOUR) });
    expect(row.disabledReason).toBe(
      `its notifications failed from ${iso(MONDAY + 2 * HOUR)} to ${iso(MONDAY + 26 * HOUR)}, none delivered, with no more than 24 hours between one failure and the next`,
    );
  });

  it("starts again when a failure is counted with no notification to date it by: the run's first is all it knows", async () => {
    const { alert } = await webhookAlert();
    const count = (at: number) =>
      recordPermanentFailure({ sql: t.deps.sql, logger: t.deps.logger, enqueueNotice: async () => {} }, { alertId: alert.alertId, gone: false, error: "HTTP 404", now: new Date(at) });

    expect(await count(MONDAY)).toBe(false);
    expect(await count(MONDAY + 2 * DAY + HOUR)).toBe(false);
    expect(await alertRow(t, alert.alertId)).toMatchObject({ status: "active", failingSince: new Date(MONDAY + 2 * DAY + HOUR) });
  });
});
