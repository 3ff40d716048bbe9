// Email and SMS leave only by a provider (SMTP_URL, TWILIO_*) or by a fallback the operator names
// (EMAIL_TRANSPORT=outbox, SMS_TRANSPORT=log). With neither, the API refuses alerts on the
// channel and the worker sends nothing while saying so; until 2026-11-28 a forgotten SMTP_URL
// wrote every email to a file nobody read and recorded it delivered.
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDeliveryMetrics, createJobMetrics } from "../../src/metrics/index.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { auth, fieldErrors, insertWallet, problem } from "../helpers/alert-fixtures.ts";
import {
  alertRow,
  attemptsOf,
  seedAlert,
  seedNotification,
  startDeliveryWorkers,
  waitForNotification,
  type DeliveryWorkers,
  type SeededAlert,
} from "../helpers/delivery.ts";
import { waitFor } from "../helpers/wait.ts";

/** A notification that has failed its schedule (not queued: no worker touches it). */
async function failedNotification(t: TestApp, alert: SeededAlert, channel: "webhook" | "email", destination: string): Promise<string> {
  const id = await seedNotification(t, alert, channel, destination, { enqueue: false });
  await t.deps.sql`update notifications set status = 'failed', attempt_count = 3 where id = ${id}`;
  return id;
}

const notificationState = async (t: TestApp, id: string) =>
  (await t.deps.sql<{ status: string; attemptCount: number }[]>`select status, attempt_count as "attemptCount" from notifications where id = ${id}`)[0];

const notificationsOf = async (t: TestApp, alertId: string) =>
  (await t.deps.sql<{ n: number }[]>`select count(*)::int as n from notifications where alert_id = ${alertId}`)[0]?.n;

const lastHour = () => ({ since: new Date(Date.now() - 3_600_000).toISOString() });

const attemptsCounted = async (registry: Registry, channel: string, outcome: string) =>
  Number(new RegExp(`^wallet_alerts_delivery_attempts_total\\{channel="${channel}",outcome="${outcome}"\\} (\\d+)$`, "m").exec(await registry.metrics())?.[1]);

describe("without SMTP_URL, TWILIO_* or an opt-in to their fallbacks", () => {
  let t: TestApp;
  let token: string;
  let walletId: string;
  let workers: DeliveryWorkers;
  const registry = new Registry();

  beforeAll(async () => {
    // "" is unset: the test helpers otherwise opt in to the outbox and the log.
    // One test and one redelivery an hour: a refusal that spent either leaves none for the webhook after it.
    t = await startTestApp("channels-off", {
      EMAIL_TRANSPORT: "",
      SMS_TRANSPORT: "",
      RETRY_SCHEDULE: "100ms,100ms",
      TEST_NOTIFICATIONS_PER_HOUR: "1",
      REDELIVERIES_PER_HOUR: "1",
    });
    token = await t.token("alice");
    ({ walletId } = await insertWallet(t, "alice"));
    workers = startDeliveryWorkers(t, {}, { deliveryMetrics: createDeliveryMetrics(registry, createJobMetrics(registry)) });
  });
  afterAll(async () => {
    await workers?.close();
    await t?.close();
  });

  const create = (payload: Record<string, unknown>) => t.app.inject({ method: "POST", url: "/v1/risk/alerts", headers: auth(token), payload });

  it("refuses to create an email alert with a 400 naming SMTP_URL and EMAIL_TRANSPORT", async () => {
    const res = await create({ walletId, condition: "large_transfer", threshold: 1000, notificationMethod: "email", recipient: "desk@example.com" });
    const errors = fieldErrors(res);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/^body\.notificationMethod email is not configured on this service: .*SMTP_URL .*EMAIL_TRANSPORT=outbox/);
  });

  it("refuses to create an SMS alert with a 400 naming TWILIO_* and SMS_TRANSPORT, and still creates a webhook alert", async () => {
    const sms = await create({ walletId, condition: "large_transfer", threshold: 1000, notificationMethod: "sms", recipient: "+14155552671" });
    expect(fieldErrors(sms)).toEqual([expect.stringMatching(/^body\.notificationMethod sms is not configured on this service: .*TWILIO_ACCOUNT_SID.*SMS_TRANSPORT=log/)]);
    const webhook = await create({ walletId, condition: "large_transfer", threshold: 1000, notificationMethod: "webhook", webhookUrl: "http://127.0.0.1:9/hook" });
    expect(webhook.statusCode).toBe(201);
  });

  it("refuses to resume an existing email alert or change its recipient, and lets it be paused", async () => {
    const alert = await seedAlert(t, { method: "email", recipient: "desk@example.com" });
    const patch = (payload: Record<string, unknown>) =>
      t.app.inject({ method: "PATCH", url: `/v1/risk/alerts/${alert.alertId}`, headers: auth(token), payload });
    expect((await patch({ status: "paused" })).statusCode).toBe(200);
    expect(fieldErrors(await patch({ status: "active" }))).toEqual([expect.stringMatching(/^body\.status cannot be active: email is not configured .*SMTP_URL/)]);
    expect(fieldErrors(await patch({ recipient: "other@example.com" }))).toEqual([expect.stringMatching(/^body\.recipient cannot change: email is not configured/)]);
    expect((await alertRow(t, alert.alertId)).status).toBe("paused");
  });

  it("does not mark an email notification delivered: each attempt fails as the deployment's fault naming SMTP_URL, and the alert is not counted against", async () => {
    const alert = await seedAlert(t, { method: "email", recipient: "desk@example.com" });
    const id = await seedNotification(t, alert, "email", "desk@example.com");
    const failed = await waitForNotification(t, id, (row) => row.status === "failed");
    expect(failed.attemptCount).toBe(3);
    const attempts = await attemptsOf(t, id);
    expect(attempts).toHaveLength(3);
    for (const attempt of attempts) expect(attempt.error).toContain("not sent: email is not configured on this service");
    expect(attempts[0]!.error).toContain("SMTP_URL");
    // The deployment's fault: the alert's failures are not counted, it stays active.
    const row = await alertRow(t, alert.alertId);
    expect(row.status).toBe("active");
    expect(row.failingSince).toBeNull();
    await waitFor("the attempts counted", async () => (await attemptsCounted(registry, "email", "failed")) === 1);
    expect(await attemptsCounted(registry, "email", "delivered")).toBe(0);
    expect(await attemptsCounted(registry, "email", "not_sent")).toBe(0);
  });
  it("refuses a test of an email alert with a 409 naming SMTP_URL, writing no notification and spending no test quota", async () => {
    const bob = await t.token("bob");
    const email = await seedAlert(t, { method: "email", recipient: "desk@example.com", owner: "bob" });
    const refused = problem(await t.app.inject({ method: "POST", url: `/v1/risk/alerts/${email.alertId}/test`, headers: auth(bob) }), 409, "conflict");
    expect(refused.detail).toMatch(/^a test of alert alr_\S+ cannot be sent: email is not configured on this service: .*SMTP_URL .*EMAIL_TRANSPORT=outbox/);
    expect(await notificationsOf(t, email.alertId)).toBe(0);
    // The hour's one test is still there.
    const webhook = await seedAlert(t, { method: "webhook", webhookUrl: "http://127.0.0.1:9/hook", owner: "bob" });
    expect((await t.app.inject({ method: "POST", url: `/v1/risk/alerts/${webhook.alertId}/test`, headers: auth(bob) })).statusCode).toBe(202);
  });

  it("refuses to redeliver a failed email notification with a 409 naming SMTP_URL, leaving it failed and the redelivery quota unspent", async () => {
    const carol = await t.token("carol");
    const email = await seedAlert(t, { method: "email", recipient: "desk@example.com", owner: "carol" });
    const id = await failedNotification(t, email, "email", "desk@example.com");
    const redeliver = (notificationId: string) => t.app.inject({ method: "POST", url: `/v1/notifications/${notificationId}/redeliver`, headers: auth(carol) });
    const refused = problem(await redeliver(id), 409, "conflict");
    expect(refused.detail).toMatch(/^notification ntf_\S+ cannot be sent: email is not configured on this service: .*SMTP_URL/);
    expect(await notificationState(t, id)).toEqual({ status: "failed", attemptCount: 3 });
    const webhook = await seedAlert(t, { method: "webhook", webhookUrl: "http://127.0.0.1:9/hook", owner: "carol" });
    expect((await redeliver(await failedNotification(t, webhook, "webhook", "http://127.0.0.1:9/hook"))).statusCode).toBe(202);
  });

  it("refuses an email alert's window redelivery whole with a 409, leaving its notifications failed, its failure run and the redelivery quota as they were", async () => {
    const dave = await t.token("dave");
    const email = await seedAlert(t, { method: "email", recipient: "desk@example.com", owner: "dave" });
    const id = await failedNotification(t, email, "email", "desk@example.com");
    const failingSince = new Date(Date.now() - 60_000);
    await t.deps.sql`update alerts set failing_since = ${failingSince.toISOString()}::timestamptz where id = ${email.alertId}`;
    const redeliver = (alertId: string) =>
      t.app.inject({ method: "POST", url: `/v1/risk/alerts/${alertId}/notifications/redeliver`, headers: auth(dave), payload: lastHour() });
    const refused = problem(await redeliver(email.alertId), 409, "conflict");
    expect(refused.detail).toMatch(/^alert alr_\S+'s notifications cannot be sent: email is not configured on this service: .*SMTP_URL/);
    expect(await notificationState(t, id)).toEqual({ status: "failed", attemptCount: 3 });
    expect((await alertRow(t, email.alertId)).failingSince).toEqual(failingSince);
    // Even with nothing failed in the window: the answer does not depend on what it holds.
    expect((await t.app.inject({ method: "POST", url: `/v1/risk/alerts/${email.alertId}/notifications/redeliver`, headers: auth(dave), payload: { since: "2020-01-01T00:00:00Z", until: "2020-01-02T00:00:00Z" } })).statusCode).toBe(409);
    const webhook = await seedAlert(t, { method: "webhook", webhookUrl: "http://127.0.0.1:9/hook", owner: "dave" });
    const webhookId = await failedNotification(t, webhook, "webhook", "http://127.0.0.1:9/hook");
    const accepted = await redeliver(webhook.alertId);
    expect(accepted.statusCode).toBe(202);
    expect(accepted.json()).toEqual({ redelivered: 1, notificationIds: [webhookId], more: false });
  });
});

describe("with EMAIL_TRANSPORT=outbox and no SMTP_URL", () => {
  let t: TestApp;
  let token: string;
  let walletId: string;
  let workers: DeliveryWorkers;
  let outboxDir: string;
  const registry = new Registry();

  beforeAll(async () => {
    outboxDir = await mkdtemp(join(tmpdir(), "wa-outbox-opt-in-"));
    t = await startTestApp("channels-outbox", { EMAIL_TRANSPORT: "outbox" });
    token = await t.token("alice");
    ({ walletId } = await insertWallet(t, "alice"));
    workers = startDeliveryWorkers(t, { outboxDir }, { deliveryMetrics: createDeliveryMetrics(registry, createJobMetrics(registry)) });
  });
  afterAll(async () => {
    await workers?.close();
    await t?.close();
    await rm(outboxDir, { recursive: true, force: true });
  });

  it("creates email alerts and writes their notifications to the outbox, recorded delivered with an attempt that says not sent and counted not_sent", async () => {
    const res = await t.app.inject({
      method: "POST",
      url: "/v1/risk/alerts",
      headers: auth(token),
      payload: { walletId, condition: "large_transfer", threshold: 1000, notificationMethod: "email", recipient: "desk@example.com" },
    });
    expect(res.statusCode).toBe(201);
    const alert = await seedAlert(t, { method: "email", recipient: "desk@example.com" });
    const id = await seedNotification(t, alert, "email", "desk@example.com");
    const delivered = await waitForNotification(t, id, (row) => row.status === "delivered");
    expect(delivered.attemptCount).toBe(1);
    expect(await readdir(outboxDir)).toEqual([`${id}.eml`]);
    const [attempt] = await attemptsOf(t, id);
    expect(attempt!.responseBody).toBe(`not sent: written to ${outboxDir}/${id}.eml (EMAIL_TRANSPORT=outbox)`);
    await waitFor("the attempt counted", async () => (await attemptsCounted(registry, "email", "not_sent")) === 1);
    expect(await attemptsCounted(registry, "email", "delivered")).toBe(0);
  });
  it("sends a test of an email alert and redelivers its failed notifications, by id and by window", async () => {
    const alert = await seedAlert(t, { method: "email", recipient: "desk@example.com" });
    expect((await t.app.inject({ method: "POST", url: `/v1/risk/alerts/${alert.alertId}/test`, headers: auth(token) })).statusCode).toBe(202);
    const byId = await failedNotification(t, alert, "email", "desk@example.com");
    const single = await t.app.inject({ method: "POST", url: `/v1/notifications/${byId}/redeliver`, headers: auth(token) });
    expect(single.statusCode).toBe(202);
    await waitForNotification(t, byId, (row) => row.status === "delivered");
    const inWindow = await failedNotification(t, alert, "email", "desk@example.com");
    const bulk = await t.app.inject({ method: "POST", url: `/v1/risk/alerts/${alert.alertId}/notifications/redeliver`, headers: auth(token), payload: lastHour() });
    expect(bulk.statusCode).toBe(202);
    expect(bulk.json()).toEqual({ redelivered: 1, notificationIds: [inWindow], more: false });
  });
});
