// Alert health and redelivery (notify/alert-health.ts): a redelivery starts the alert's failure
// count afresh, so a redelivered notification that fails again counts once, at that moment,
// and never stretches a run that its own earlier failure dated past the 24 h that disable the
// alert. The app's clock (and so the workers' record of each failure) is moved forward by hand.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { insertNotification } from "../../src/db/queries/notifications.ts";
import { newId } from "../../src/ids.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { alertRow, samplePayload, seedNotification, startDeliveryWorkers, waitForNotification, isFinished, type DeliveryWorkers } from "../helpers/delivery.ts";
import { bearer, trackWallet } from "../helpers/seed.ts";
import { startWebhookReceiver, type Route, type WebhookReceiver } from "../helpers/webhook-receiver.ts";

const HOUR_MS = 3_600_000;
let aheadMs = 0;
let t: TestApp;
let receiver: WebhookReceiver;
let workers: DeliveryWorkers;
let alice: string;
let hooks = 0;

beforeAll(async () => {
  t = await startTestApp("redelivery-alert-health", { RETRY_SCHEDULE: "100ms" }, { now: () => new Date(Date.now() + aheadMs) });
  receiver = await startWebhookReceiver();
  workers = startDeliveryWorkers(t, { webhookTimeoutMs: 2_000 });
  alice = await t.token("alice");
});
afterAll(async () => {
  await workers?.close();
  await receiver?.close();
  await t?.close();
});

type Alert = { alertId: string; walletId: string; address: string };

async function webhookAlert(): Promise<{ alert: Alert; route: Route }> {
  const wallet = await trackWallet(t, alice);
  const route = receiver.route(`/health-hook-${++hooks}`);
  const res = await t.app.inject({
    method: "POST",
    url: "/v1/risk/alerts",
    headers: bearer(alice),
    payload: { walletId: wallet.walletId, condition: "large_transfer", threshold: 5_000, notificationMethod: "webhook", webhookUrl: route.url },
  });
  return { alert: { alertId: res.json<{ alertId: string }>().alertId, walletId: wallet.walletId, address: wallet.address }, route };
}

/** The alert as a failure `hoursAgo` left it: that notification failed, and the alert's run of failures begun by it. */
async function failedAndRunBegun(alert: Alert, url: string, hoursAgo: number): Promise<string> {
  const at = new Date(t.deps.now().getTime() - hoursAgo * HOUR_MS);
  const id = newId("ntf", at.getTime());
  await insertNotification(t.deps.sql, { id, alertId: alert.alertId, eventId: null, channel: "webhook", destination: url, payload: samplePayload(alert), createdAt: at });
  await t.deps.sql`update notifications set status = 'failed', attempt_count = 1, updated_at = ${at.toISOString()}::timestamptz where id = ${id}`;
  await t.deps.sql`update alerts set failing_since = ${at.toISOString()}::timestamptz where id = ${alert.alertId}`;
  return id;
}

const redeliver = (id: string) => t.app.inject({ method: "POST", url: `/v1/notifications/${id}/redeliver`, headers: bearer(alice) });

describe("a redelivered notification and its alert's failure run", () => {
  it("that fails again counts once, from the moment it fails: the run its first failure began does not go on to disable the alert", async () => {
    const { alert, route } = await webhookAlert();
    // Refused 23 h ago, which began the alert's run; the receiver still refuses it.
    const refused = await failedAndRunBegun(alert, route.url, 23);
    route.respond({ status: 400, body: "unknown tenant" }, { status: 400, body: "unknown tenant" });
    expect((await redeliver(refused)).statusCode).toBe(202);
    expect((await waitForNotification(t, refused, (row) => row.status === "failed" && row.attemptCount === 1)).status).toBe("failed");
    const afterRedelivery = await alertRow(t, alert.alertId);
    expect(afterRedelivery.status).toBe("active");
    expect(afterRedelivery.failingSince!.getTime()).toBeGreaterThan(t.deps.now().getTime() - HOUR_MS);

    // Two hours on, another notification is refused: 25 h after the first failure of the
    // redelivered one, 2 h after its second. A run of 2 h: the alert stays active.
    aheadMs += 2 * HOUR_MS;
    const next = await seedNotification(t, { ...alert, owner: "alice", secret: null }, "webhook", route.url);
    expect((await waitForNotification(t, next, isFinished)).status).toBe("failed");
    const alertNow = await alertRow(t, alert.alertId);
    expect(alertNow.status).toBe("active");
    expect(alertNow.disabledReason).toBeNull();
  });

  it("that is delivered leaves its alert with no failure run", async () => {
    const { alert, route } = await webhookAlert();
    const refused = await failedAndRunBegun(alert, route.url, 3);
    expect((await redeliver(refused)).statusCode).toBe(202);
    expect((await waitForNotification(t, refused, isFinished)).status).toBe("delivered");
    const alertNow = await alertRow(t, alert.alertId);
    expect(alertNow.status).toBe("active");
    expect(alertNow.failingSince).toBeNull();
  });
});
