// Where each delivery attempt went (a compliance review): an owner who moves an alert's webhookUrl
// or recipient moves the attempts after it, and each attempt keeps its own destination, so a
// failure at the old one never reads as if it happened at the new one. GET /v1/notifications/{id}
// shows it (a webhook URL without its query); the archive of a deleted alert keeps it.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DELIVERY_QUEUE } from "../../src/queue/names.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { startDeliveryWorkers, type DeliveryWorkers } from "../helpers/delivery.ts";
import { bearer, trackWallet } from "../helpers/seed.ts";
import { startSmtpPeer, type SmtpPeer } from "../helpers/smtp-peer.ts";
import { waitFor } from "../helpers/wait.ts";
import { startWebhookReceiver, type WebhookReceiver } from "../helpers/webhook-receiver.ts";

let t: TestApp;
let receiver: WebhookReceiver;
let smtp: SmtpPeer;
let workers: DeliveryWorkers;
let alice: string;

beforeAll(async () => {
  smtp = await startSmtpPeer();
  t = await startTestApp("attempt-destinations", { RETRY_SCHEDULE: "100ms", SMTP_URL: smtp.url, EMAIL_FROM: "alerts@wallet-alerts.test" });
  receiver = await startWebhookReceiver();
  workers = startDeliveryWorkers(t, { webhookTimeoutMs: 2_000 });
  alice = await t.token("alice");
});
afterAll(async () => {
  await workers?.close();
  await receiver?.close();
  await t?.close();
  await smtp?.close();
});

type Attempt = { statusCode: number | null; destination: string | null };
type NotificationBody = { status: string; attempts: Attempt[] };

async function createAlert(body: Record<string, unknown>): Promise<{ alertId: string; webhookSecret?: string }> {
  const wallet = await trackWallet(t, alice);
  const res = await t.app.inject({
    method: "POST",
    url: "/v1/risk/alerts",
    headers: bearer(alice),
    payload: { walletId: wallet.walletId, condition: "large_transfer", threshold: 5_000, ...body },
  });
  if (res.statusCode !== 201) throw new Error(`POST /v1/risk/alerts answered ${res.statusCode}: ${res.body}`);
  return res.json();
}

const patch = (alertId: string, payload: Record<string, unknown>) =>
  t.app.inject({ method: "PATCH", url: `/v1/risk/alerts/${alertId}`, headers: bearer(alice), payload });

/** A test notification of the alert, once it has `attempts` attempts and is finished. */
async function settled(id: string, attempts: number): Promise<NotificationBody> {
  return waitFor(`notification ${id} to settle after ${attempts} attempts`, async () => {
    const body = (await t.app.inject({ url: `/v1/notifications/${id}`, headers: bearer(alice) })).json<NotificationBody>();
    return (body.status === "delivered" || body.status === "failed") && body.attempts.length === attempts ? body : undefined;
  });
}

async function sendTest(alertId: string): Promise<string> {
  const res = await t.app.inject({ method: "POST", url: `/v1/risk/alerts/${alertId}/test`, headers: bearer(alice) });
  expect(res.statusCode, res.body).toBe(202);
  return res.json<{ notificationId: string }>().notificationId;
}

/** Asks for the failed notification again, once the job that failed it is marked failed (a redelivery adds a job of its own). */
async function redeliver(id: string, queue: keyof typeof DELIVERY_QUEUE): Promise<void> {
  await waitFor(`the job of ${id} to be marked failed`, async () => (await t.deps.queues[DELIVERY_QUEUE[queue]].getJobState(id)) === "failed");
  const res = await t.app.inject({ method: "POST", url: `/v1/notifications/${id}/redeliver`, headers: bearer(alice) });
  expect(res.statusCode, res.body).toBe(202);
}

const storedDestinations = async (table: "delivery_attempts" | "deleted_delivery_attempts", id: string) =>
  (await t.deps.sql<{ destination: string | null }[]>`select destination from ${t.deps.sql(table)} where notification_id = ${id} order by at, id`).map(
    (row) => row.destination,
  );

describe("the destination of each delivery attempt", () => {
  it("keeps URL A on the attempt refused there after the owner moved the alert to URL B, shows it without its query, and archives it", async () => {
    const old = receiver.route("/old-endpoint").respond({ status: 400, body: "no such tenant" });
    const mended = receiver.route("/new-endpoint");
    const urlA = `${old.url}?token=receiver-secret-a`;
    const alert = await createAlert({ notificationMethod: "webhook", webhookUrl: urlA });
    const id = await sendTest(alert.alertId);
    expect((await settled(id, 1)).status).toBe("failed");

    expect((await patch(alert.alertId, { webhookUrl: mended.url })).statusCode).toBe(200);
    await redeliver(id, "webhook");
    const body = await settled(id, 2);
    expect(body.status).toBe("delivered");
    expect(old.requests).toHaveLength(1);
    expect(mended.requests).toHaveLength(1);
    // Scheme, host and path: the receiver's token in the query is not shown again.
    expect(body.attempts.map((a) => [a.statusCode, a.destination])).toEqual([
      [400, old.url],
      [200, mended.url],
    ]);
    expect(JSON.stringify(body)).not.toContain("receiver-secret-a");
    // Postgres keeps each whole; the notification row keeps the latest (as documented).
    expect(await storedDestinations("delivery_attempts", id)).toEqual([urlA, mended.url]);
    const [row] = await t.deps.sql<{ destination: string }[]>`select destination from notifications where id = ${id}`;
    expect(row!.destination).toBe(mended.url);

    expect((await t.app.inject({ method: "DELETE", url: `/v1/risk/alerts/${alert.alertId}`, headers: bearer(alice) })).statusCode).toBe(204);
    expect(await storedDestinations("deleted_delivery_attempts", id)).toEqual([urlA, mended.url]);
  });

  it("keeps the email address each attempt went to, as given", async () => {
    smtp.rejectRecipient("old-desk@example.com", 550);
    const alert = await createAlert({ notificationMethod: "email", recipient: "old-desk@example.com" });
    const id = await sendTest(alert.alertId);
    expect((await settled(id, 1)).status).toBe("failed");

    expect((await patch(alert.alertId, { recipient: "new-desk@example.com" })).statusCode).toBe(200);
    await redeliver(id, "email");
    const body = await settled(id, 2);
    expect(body.attempts.map((a) => [a.statusCode, a.destination])).toEqual([
      [550, "old-desk@example.com"],
      [250, "new-desk@example.com"],
    ]);
  });
});
