// An outage of our SMTP server: its notifications are retried on the provider's short interval,
// not the recipient's schedule, so the email goes out soon after the server is back, and the
// API's /metrics shows the stuck notification meanwhile. Until 2026-11-28 an email failed at the
// start of a 40-minute outage waited for its schedule's next slot, 2 h 35 m in, and no rule of the
// README's fired for a handful of stuck ones (an operator's review).
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDeliveryMetrics, createJobMetrics } from "../../src/metrics/index.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
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
import { startSmtpPeer, type SmtpPeer } from "../helpers/smtp-peer.ts";
import { waitFor } from "../helpers/wait.ts";

const ADMIN = { user: "ops", password: "correct-horse-battery" };
const AUTHORIZATION = `Basic ${Buffer.from(`${ADMIN.user}:${ADMIN.password}`).toString("base64")}`;
/** The provider's interval in this test; the recipient's schedule below waits 5 minutes at its second step. */
const PROVIDER_RETRY_MS = 500;

let t: TestApp;
let port: number;
let smtp: SmtpPeer | undefined;
let workers: DeliveryWorkers;
const registry = new Registry();

beforeAll(async () => {
  const stopped = await startSmtpPeer();
  port = stopped.port;
  await stopped.close();
  t = await startTestApp("email-provider-outage", {
    SMTP_URL: stopped.url,
    EMAIL_FROM: "alerts@wallet-alerts.test",
    RETRY_SCHEDULE: "1s,5m,30m",
    ADMIN_USER: ADMIN.user,
    ADMIN_PASSWORD: ADMIN.password,
  });
  workers = startDeliveryWorkers(
    t,
    { smtpTimeoutMs: 2_000 },
    { providerRetryMs: PROVIDER_RETRY_MS, deliveryMetrics: createDeliveryMetrics(registry, createJobMetrics(registry)) },
  );
});
afterAll(async () => {
  await workers?.close();
  await smtp?.close();
  await t?.close();
});

async function scraped(pattern: RegExp): Promise<number> {
  const body = (await t.app.inject({ url: "/metrics", headers: { authorization: AUTHORIZATION } })).body;
  return Number(pattern.exec(body)?.[1]);
}
const oldestRetryingEmail = () => scraped(/^wallet_alerts_notification_oldest_retrying_seconds\{channel="email"\} (\S+)$/m);
const providerUnavailable = async () =>
  Number(/^wallet_alerts_delivery_provider_unavailable_total\{channel="email"\} (\d+)$/m.exec(await registry.metrics())?.[1]);

describe("an outage of the SMTP server", () => {
  it("retries the email on the provider's interval past the schedule's 5-minute step, shows it stuck, and delivers it once the server is back", async () => {
    const to = "desk@example.com";
    const alert = await seedAlert(t, { method: "email", recipient: to });
    const id = await seedNotification(t, alert, "email", to);

    // Past the schedule's first step (1 s): on the recipient's schedule the next attempt would be 5 minutes away.
    await waitFor("four refused attempts", async () => (await attemptsOf(t, id)).length >= 4, 15_000);
    const stuck = await waitForNotification(t, id, () => true);
    expect(stuck.status).toBe("retrying");
    expect(stuck.nextAttemptAt!.getTime() - Date.now()).toBeLessThan(60_000);
    for (const attempt of await attemptsOf(t, id)) expect(attempt.error).toMatch(/ECONNREFUSED/);
    expect(await oldestRetryingEmail()).toBeGreaterThan(0);
    expect(await providerUnavailable()).toBeGreaterThanOrEqual(4);

    smtp = await startSmtpPeer({ port }); // the server is back
    expect((await waitForNotification(t, id, isFinished)).status).toBe("delivered");
    expect(smtp.messages.filter((mail) => mail.to.includes(to))).toHaveLength(1);
    expect(await oldestRetryingEmail()).toBe(0);
    expect((await alertRow(t, alert.alertId)).failingSince).toBeNull();
  });
});
