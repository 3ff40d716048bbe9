// wallet_alerts_webhook_receivers_retrying (README, Monitoring): from how many receivers the
// webhook retrying backlog comes, which is what tells one customer's receiver that is down (a
// ticket) from the worker's own network failing every receiver (a page). Read by the real API's
// /metrics from real PostgreSQL, with notifications written as the pipeline writes them.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { NotificationMethod } from "../../src/domain/types.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { seedAlert, seedNotification } from "../helpers/delivery.ts";

const ADMIN = { ADMIN_USER: "ops", ADMIN_PASSWORD: "correct-horse-battery" };
const AUTHORIZATION = `Basic ${Buffer.from(`${ADMIN.ADMIN_USER}:${ADMIN.ADMIN_PASSWORD}`).toString("base64")}`;
const RECEIVERS = "wallet_alerts_webhook_receivers_retrying";

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp("webhook-receivers-retrying", ADMIN);
});
afterAll(async () => {
  await t?.close();
});
// Each test starts with nothing open: the earlier tests' notifications delivered.
beforeEach(async () => {
  await t.deps.sql`update notifications set status = 'delivered', delivered_at = now() where status in ('pending', 'retrying')`;
});

async function scrape(): Promise<string> {
  const res = await t.app.inject({ url: "/metrics", headers: { authorization: AUTHORIZATION } });
  expect(res.statusCode).toBe(200);
  return res.body;
}
const sample = (body: string, series: string) => body.split("\n").find((line) => line.startsWith(`${series} `))?.slice(series.length + 1);

/** `count` notifications of a new alert of `owner`'s to `url`, left in `status` as a delivery attempt leaves them. */
async function notificationsTo(url: string, status: string, count = 1, owner = "alice", channel: NotificationMethod = "webhook"): Promise<void> {
  const alert = await seedAlert(t, channel === "webhook" ? { method: "webhook", webhookUrl: url, owner } : { method: channel, recipient: url, owner });
  const ids: string[] = [];
  for (let i = 0; i < count; i++) ids.push(await seedNotification(t, alert, channel, url, { enqueue: false }));
  await t.deps.sql`update notifications set status = ${status}, attempt_count = 1, next_attempt_at = now() + interval '1 hour' where id in ${t.deps.sql(ids)}`;
}

describe("the webhook receivers with notifications retrying", () => {
  it("are 0 with none retrying: pending, delivered and failed webhooks and retrying emails and SMS are not counted", async () => {
    await notificationsTo("https://pending.example/hook", "pending");
    await notificationsTo("https://delivered.example/hook", "delivered");
    await notificationsTo("https://failed.example/hook", "failed");
    await notificationsTo("ops@mail.example", "retrying", 1, "alice", "email");
    await notificationsTo("+14155550100", "retrying", 1, "alice", "sms");
    const body = await scrape();
    expect(body).toContain(`# TYPE ${RECEIVERS} gauge`);
    expect(sample(body, RECEIVERS)).toBe("0");
  });

  it("count one customer's receiver that is down as 1, whatever the backlog, its alerts, its hosts under one domain, ports and paths", async () => {
    // As the soak review saw it: many alerts' notifications piling up for one receiver.
    await notificationsTo("https://hooks.acme.example/wallets/a", "retrying", 40);
    await notificationsTo("https://hooks.acme.example/wallets/b", "retrying", 40);
    await notificationsTo("https://eu.acme.example:8443/wallets", "retrying", 40);
    await notificationsTo("https://HOOKS.ACME.EXAMPLE./wallets/c?tenant=7", "retrying", 40);
    const body = await scrape();
    expect(sample(body, 'wallet_alerts_notifications{channel="webhook",status="retrying"}')).toBe("160");
    expect(sample(body, RECEIVERS)).toBe("1");
  });

  it("count 3 when three receivers' notifications are retrying: two domains and an address (an IPv6 /64 once)", async () => {
    await notificationsTo("https://hooks.acme.example/wallets", "retrying", 5, "alice");
    await notificationsTo("https://alerts.globex.example/in", "retrying", 1, "bob");
    await notificationsTo("https://[2001:db8:1:2::10]:8443/hook", "retrying", 1, "carol");
    await notificationsTo("https://[2001:db8:1:2::11]/hook", "retrying", 1, "carol");
    expect(sample(await scrape(), RECEIVERS)).toBe("3");
  });

  it("count a receiver no longer once its notifications are delivered", async () => {
    await notificationsTo("https://hooks.acme.example/wallets", "retrying");
    await notificationsTo("https://alerts.globex.example/in", "retrying");
    await notificationsTo("https://203.0.113.7/hook", "retrying");
    expect(sample(await scrape(), RECEIVERS)).toBe("3");
    await t.deps.sql`update notifications set status = 'delivered', delivered_at = now() where destination = 'https://203.0.113.7/hook'`;
    expect(sample(await scrape(), RECEIVERS)).toBe("2");
  });
});
