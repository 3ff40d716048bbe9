// POST /v1/notifications/{id}/redeliver and POST /v1/risk/alerts/{id}/notifications/redeliver:
// a failed notification reopened by its owner, sent by the real delivery workers to a real
// webhook receiver (signatures checked with standardwebhooks) or SMTP server, under the same
// notification id, with a fresh retry schedule and its earlier attempts kept.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { insertNotification } from "../../src/db/queries/notifications.ts";
import { mintToken } from "../../src/http/mint-token.ts";
import { newId } from "../../src/ids.ts";
import { DELIVERY_QUEUE } from "../../src/queue/names.ts";
import { insertEvent } from "../helpers/alert-fixtures.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { randomAddress } from "../helpers/chain.ts";
import { clockClearOfBoundary, HOUR_MS } from "../helpers/clock.ts";
import { samplePayload, startDeliveryWorkers, type DeliveryWorkers } from "../helpers/delivery.ts";
import { TEST_JWT_SECRET } from "../helpers/env.ts";
import { startLoggedApp } from "../helpers/logged-app.ts";
import { parseMessage, startSmtpPeer, type SmtpPeer } from "../helpers/smtp-peer.ts";
import { bearer, errorPaths, expectProblem, trackWallet } from "../helpers/seed.ts";
import { waitFor } from "../helpers/wait.ts";
import { startWebhookReceiver, type Route, type WebhookReceiver } from "../helpers/webhook-receiver.ts";

let t: TestApp;
let receiver: WebhookReceiver;
let smtp: SmtpPeer;
let workers: DeliveryWorkers;
let alice: string;
let bob: string;
let hooks = 0;

beforeAll(async () => {
  smtp = await startSmtpPeer();
  // Two attempts in all: a notification refused twice by 5xx has failed. The quota has its own
  // test below; here it must not cut the 1,001 of the cap's test short.
  t = await startTestApp("notification-redelivery", {
    RETRY_SCHEDULE: "100ms",
    SMTP_URL: smtp.url,
    EMAIL_FROM: "alerts@wallet-alerts.test",
    REDELIVERIES_PER_HOUR: "100000",
  });
  receiver = await startWebhookReceiver();
  workers = startDeliveryWorkers(t, { webhookTimeoutMs: 2_000 });
  alice = await t.token("alice");
  bob = await t.token("bob");
});
afterAll(async () => {
  await workers?.close();
  await receiver?.close();
  await t?.close();
  await smtp?.close();
});

type Alert = { alertId: string; walletId: string; address: string; webhookSecret?: string };
type NotificationBody = { notificationId: string; status: string; attempts: Array<{ statusCode: number | null; error: string | null }> };

async function createAlert(body: Record<string, unknown>, token = alice): Promise<Alert> {
  const wallet = await trackWallet(t, token, { alias: "Treasury" });
  const res = await t.app.inject({
    method: "POST",
    url: "/v1/risk/alerts",
    headers: bearer(token),
    payload: { walletId: wallet.walletId, condition: "large_transfer", threshold: 5_000, ...body },
  });
  if (res.statusCode !== 201) throw new Error(`POST /v1/risk/alerts answered ${res.statusCode}: ${res.body}`);
  return { ...res.json<Alert>(), address: wallet.address };
}

async function webhookAlert(token = alice): Promise<{ alert: Alert; route: Route }> {
  const route = receiver.route(`/redelivery-hook-${++hooks}`);
  const alert = await createAlert({ notificationMethod: "webhook", webhookUrl: route.url }, token);
  route.verifyWith(alert.webhookSecret!);
  return { alert, route };
}

const get = (id: string, token = alice) => t.app.inject({ url: `/v1/notifications/${id}`, headers: bearer(token) });
const redeliver = (id: string, token = alice) => t.app.inject({ method: "POST", url: `/v1/notifications/${id}/redeliver`, headers: bearer(token) });
const redeliverWindow = (alertId: string, payload: Record<string, unknown>, token = alice) =>
  t.app.inject({ method: "POST", url: `/v1/risk/alerts/${alertId}/notifications/redeliver`, headers: bearer(token), payload });

/** Polls GET /v1/notifications/{id} until `done` holds. */
async function notificationWhen(id: string, done: (body: NotificationBody) => boolean, token = alice): Promise<NotificationBody> {
  return waitFor(`notification ${id}`, async () => {
    const body = (await get(id, token)).json<NotificationBody>();
    return done(body) ? body : undefined;
  });
}
const alertRowStatus = async (alertId: string) => (await t.deps.sql<{ status: string }[]>`select status from alerts where id = ${alertId}`)[0]?.status;
const settled = (id: string) => notificationWhen(id, (body) => body.status === "delivered" || body.status === "failed");

/** A test notification of the alert that its receiver refuses for good (400), failed. */
async function failedTest(alert: Alert, route?: Route): Promise<string> {
  route?.respond({ status: 400, body: "no such tenant" });
  const res = await t.app.inject({ method: "POST", url: `/v1/risk/alerts/${alert.alertId}/test`, headers: bearer(alice) });
  expect(res.statusCode).toBe(202);
  const { notificationId } = res.json<{ notificationId: string }>();
  expect((await settled(notificationId)).status).toBe("failed");
  return notificationId;
}

/** Waits until the job that failed the notification is marked failed (just after the row is). */
const failedJob = (id: string) =>
  waitFor(`the job of ${id} to be marked failed`, async () => (await t.deps.queues[DELIVERY_QUEUE.webhook].getJobState(id)) === "failed");

/**
 * A notification of the alert written as failed, made at `createdAt` (as an outage leaves them):
 * of an event the alert fired; a test notification (`test`), which has none; or (`digest`) the
 * cooldown digest of a window that held back one event (observed 777,000), which has none
 * either. A digest is written as pipeline/cooldown-digest.ts writes one: its cooldown_digests
 * row, and its payload unbuilt (the delivery job builds it from the held-back event at its next
 * attempt). Its window starts a second before it was made and lasts a minute.
 */
async function seedFailed(
  alert: Alert,
  channel: "webhook" | "email",
  destination: string,
  createdAt: Date,
  kind: "event" | "test" | "digest" = "event",
  app: TestApp = t,
): Promise<string> {
  const id = newId("ntf", createdAt.getTime());
  const eventId = kind === "event" ? (await insertEvent(app, alert.alertId, { createdAt })).eventId : null;
  if (kind === "digest") await insertEvent(app, alert.alertId, { createdAt, suppressed: true, observed: 777_000 });
  const sample = samplePayload(alert, PAYLOAD_TYPES[kind]);
  const payload = kind === "digest" ? { ...sample, data: { ...sample.data, observed: null, reason: "" } } : sample;
  await insertNotification(app.deps.sql, { id, alertId: alert.alertId, eventId, channel, destination, payload, createdAt });
  if (kind === "digest") {
    await app.deps.sql`
      insert into cooldown_digests (alert_id, window_start, window_end, notification_id)
      values (${alert.alertId}, ${new Date(createdAt.getTime() - 1_000).toISOString()}::timestamptz,
              ${new Date(createdAt.getTime() + 60_000).toISOString()}::timestamptz, ${id})`;
  }
  await app.deps.sql`update notifications set status = 'failed', attempt_count = 2, updated_at = ${createdAt.toISOString()}::timestamptz where id = ${id}`;
  return id;
}
const PAYLOAD_TYPES = { event: "risk_alert.triggered", test: "risk_alert.test", digest: "risk_alert.suppressed" } as const;

describe("POST /v1/notifications/{id}/redeliver", () => {
  it("sends a failed webhook again under the same webhook-id, signed, to the alert's current URL, and keeps the earlier attempts", async () => {
    const { alert, route } = await webhookAlert();
    const id = await failedTest(alert, route);
    // The job that failed it is kept (a week): an add under its id alone would be ignored.
    await failedJob(id);
    // The owner mends the destination, then asks for the notification again.
    const mended = receiver.route(`/redelivery-hook-${++hooks}`).verifyWith(alert.webhookSecret!);
    expect((await t.app.inject({ method: "PATCH", url: `/v1/risk/alerts/${alert.alertId}`, headers: bearer(alice), payload: { webhookUrl: mended.url } })).statusCode).toBe(200);

    const res = await redeliver(id);
    expect(res.statusCode).toBe(202);
    expect(res.json()).toEqual({ notificationId: id });
    expect(res.headers.location).toBe(`/v1/notifications/${id}`);

    const body = await settled(id);
    expect(body.status).toBe("delivered");
    expect(body.attempts.map((a) => a.statusCode)).toEqual([400, 200]);
    const [request] = mended.requests;
    expect(mended.requests).toHaveLength(1);
    expect(request!.headers["webhook-id"]).toBe(id);
    expect(request!.verifiedWith).toEqual([alert.webhookSecret]);
    // The same content as the first attempt: the notification resent, not a new one.
    expect(JSON.parse(request!.body)).toEqual(JSON.parse(route.requests[0]!.body));
  });

  it("starts the retry schedule afresh: a redelivered notification refused by 5xx again gets every retry before it fails", async () => {
    const { alert, route } = await webhookAlert();
    route.respond({ status: 503 }, { status: 503 });
    const test = await t.app.inject({ method: "POST", url: `/v1/risk/alerts/${alert.alertId}/test`, headers: bearer(alice) });
    const id = test.json<{ notificationId: string }>().notificationId;
    expect((await settled(id)).attempts.at(-1)!.error).toBe("HTTP 503 (gave up after 2 attempts)");

    route.respond({ status: 503 }, { status: 502 });
    expect((await redeliver(id)).statusCode).toBe(202);
    const body = await notificationWhen(id, (b) => b.status === "failed" && b.attempts.length > 2);
    expect(body.attempts.map((a) => [a.statusCode, a.error])).toEqual([
      [503, "HTTP 503"],
      [503, "HTTP 503 (gave up after 2 attempts)"],
      [503, "HTTP 503"],
      [502, "HTTP 502 (gave up after 2 attempts)"],
    ]);
  });

  it("queues the notification although the run that failed it still held its job when the owner asked", async () => {
    const { alert, route } = await webhookAlert();
    const id = await failedTest(alert, route);
    await failedJob(id);
    // As that run holds the job in its last moment (its failure recorded, the job not yet marked failed): locked, for 300 ms.
    const queue = t.deps.queues[DELIVERY_QUEUE.webhook];
    await t.deps.redis.set(`${queue.toKey(id)}:lock`, "a-run-still-finishing", "PX", 300);
    expect((await redeliver(id)).statusCode).toBe(202);
    expect((await settled(id)).status).toBe("delivered");
    expect(route.requests.map((request) => request.headers["webhook-id"])).toEqual([id, id]);
  });

  it("sends a failed email again with the same Message-ID once the mailbox takes it", async () => {
    const alert = await createAlert({ notificationMethod: "email", recipient: "desk@example.com" });
    smtp.rejectRecipient("desk@example.com", 550);
    const id = await failedTest(alert);
    expect((await redeliver(id)).statusCode).toBe(202);
    expect((await settled(id)).status).toBe("delivered");
    const sent = smtp.messages.filter((mail) => mail.to.includes("desk@example.com"));
    expect(sent).toHaveLength(1);
    expect(parseMessage(sent[0]!.raw).headers.get("message-id")).toBe(`<${id}@wallet-alerts.test>`);
  });

  it("sends a notification once when several redeliver requests for it race", async () => {
    const { alert, route } = await webhookAlert();
    const id = await failedTest(alert, route);
    const answers = await Promise.all(Array.from({ length: 6 }, () => redeliver(id)));
    expect(answers.map((res) => res.statusCode).sort()).toEqual([202, 409, 409, 409, 409, 409]);
    expect((await settled(id)).status).toBe("delivered");
    expect(route.requests).toHaveLength(2); // the refused first attempt, and one redelivery
    expect((await get(id)).json<NotificationBody>().attempts).toHaveLength(2);
  });

  it("answers 409 naming the status of a notification that has not failed", async () => {
    const { alert } = await webhookAlert();
    const test = await t.app.inject({ method: "POST", url: `/v1/risk/alerts/${alert.alertId}/test`, headers: bearer(alice) });
    const id = test.json<{ notificationId: string }>().notificationId;
    expect((await settled(id)).status).toBe("delivered");
    const problem = expectProblem(await redeliver(id), 409, "conflict");
    expect(problem.detail).toBe(`notification ${id} is delivered, and only a failed notification can be redelivered: it was delivered`);
  });

  it("refuses a disabled alert's notification with 409 saying to re-enable it first, and sends it once the alert is re-enabled", async () => {
    const { alert, route } = await webhookAlert();
    const id = await seedFailed(alert, "webhook", route.url, new Date());
    await t.deps.sql`update alerts set status = 'disabled', disabled_reason = 'the webhook endpoint answered 410 Gone' where id = ${alert.alertId}`;
    const problem = expectProblem(await redeliver(id), 409, "conflict");
    expect(problem.detail).toContain("re-enable it first (PATCH /v1/risk/alerts/");
    expect((await get(id)).json<NotificationBody>().status).toBe("failed");

    expect((await t.app.inject({ method: "PATCH", url: `/v1/risk/alerts/${alert.alertId}`, headers: bearer(alice), payload: { status: "active" } })).statusCode).toBe(200);
    expect((await redeliver(id)).statusCode).toBe(202);
    expect((await settled(id)).status).toBe("delivered");
  });

  it("sends a disabled alert's failed test notification, as a test is sent while its alert is disabled", async () => {
    const { alert, route } = await webhookAlert();
    const id = await failedTest(alert, route);
    await t.deps.sql`update alerts set status = 'disabled', disabled_reason = 'the webhook endpoint answered 410 Gone' where id = ${alert.alertId}`;
    expect((await redeliver(id)).statusCode).toBe(202);
    expect((await settled(id)).status).toBe("delivered");
    expect(route.requests.map((request) => request.headers["webhook-id"])).toEqual([id, id]);
    expect((await alertRowStatus(alert.alertId))).toBe("disabled");
  });

  it("sends a paused alert's failed notification, as a paused alert still sends what it owed", async () => {
    const { alert, route } = await webhookAlert();
    const id = await failedTest(alert, route);
    await t.app.inject({ method: "PATCH", url: `/v1/risk/alerts/${alert.alertId}`, headers: bearer(alice), payload: { status: "paused" } });
    expect((await redeliver(id)).statusCode).toBe(202);
    expect((await settled(id)).status).toBe("delivered");
  });

  it("answers 404 for another caller's notification, as GET does, and changes nothing", async () => {
    const { alert, route } = await webhookAlert(alice);
    const id = await failedTest(alert, route);
    expectProblem(await redeliver(id, bob), 404, "not_found");
    expectProblem(await redeliver("ntf_unknown"), 404, "not_found");
    expect((await get(id)).json<NotificationBody>().status).toBe("failed");
  });

  it("needs alerts:write and takes no body fields", async () => {
    const reader = await t.token("alice", "alerts:read");
    const res = await redeliver("ntf_x", reader);
    expectProblem(res, 403, "forbidden");
    expect(res.headers["www-authenticate"]).toContain('scope="alerts:write"');
    const withBody = await t.app.inject({ method: "POST", url: "/v1/notifications/ntf_x/redeliver", headers: bearer(alice), payload: { urgent: true } });
    expectProblem(withBody, 400, "validation_failed");
  });
});

describe("POST /v1/risk/alerts/{id}/notifications/redeliver", () => {
  it("reopens the alert's failed notifications made in the window, oldest first, and leaves the rest alone", async () => {
    const { alert, route } = await webhookAlert();
    const start = Date.now() - 3 * HOUR_MS;
    const at = (minutes: number) => new Date(start + minutes * 60_000);
    const before = await seedFailed(alert, "webhook", route.url, at(-1));
    const first = await seedFailed(alert, "webhook", route.url, at(0));
    const second = await seedFailed(alert, "webhook", route.url, at(90));
    const after = await seedFailed(alert, "webhook", route.url, at(120));

    const res = await redeliverWindow(alert.alertId, { since: at(0).toISOString(), until: at(120).toISOString() });
    expect(res.statusCode).toBe(202);
    expect(res.json()).toEqual({ redelivered: 2, notificationIds: [first, second], more: false });
    for (const id of [first, second]) expect((await settled(id)).status).toBe("delivered");
    expect(route.requests.map((request) => request.headers["webhook-id"]).sort()).toEqual([first, second].sort());
    for (const id of [before, after]) expect((await get(id)).json<NotificationBody>().status).toBe("failed");

    // Again: nothing failed is left in the window.
    expect((await redeliverWindow(alert.alertId, { since: at(0).toISOString(), until: at(120).toISOString() })).json()).toEqual({
      redelivered: 0,
      notificationIds: [],
      more: false,
    });
  });

  it("leaves the alert's failed test notifications alone: a test is resent only when asked for by its id", async () => {
    const { alert, route } = await webhookAlert();
    const since = new Date(Date.now() - HOUR_MS);
    const test = await seedFailed(alert, "webhook", route.url, new Date(since.getTime() + 1_000), "test");
    const fired = await seedFailed(alert, "webhook", route.url, new Date(since.getTime() + 2_000));

    const res = await redeliverWindow(alert.alertId, { since: since.toISOString() });
    expect(res.json()).toEqual({ redelivered: 1, notificationIds: [fired], more: false });
    expect((await settled(fired)).status).toBe("delivered");
    expect((await get(test)).json<NotificationBody>().status).toBe("failed");
    expect(route.requests.map((request) => request.headers["webhook-id"])).toEqual([fired]);
  });

  it("reopens the alert's failed cooldown digests in the window, which the worker sends built from what the cooldown held back, and still leaves its tests", async () => {
    const { alert, route } = await webhookAlert();
    const since = new Date(Date.now() - HOUR_MS);
    const fired = await seedFailed(alert, "webhook", route.url, new Date(since.getTime() + 1_000));
    const test = await seedFailed(alert, "webhook", route.url, new Date(since.getTime() + 2_000), "test");
    const digest = await seedFailed(alert, "webhook", route.url, new Date(since.getTime() + 5_000), "digest");

    const res = await redeliverWindow(alert.alertId, { since: since.toISOString() });
    expect(res.json()).toEqual({ redelivered: 2, notificationIds: [fired, digest], more: false });
    for (const id of [fired, digest]) expect((await settled(id)).status).toBe("delivered");
    expect((await get(test)).json<NotificationBody>().status).toBe("failed");
    const sent = route.requests.find((request) => request.headers["webhook-id"] === digest);
    expect(sent!.verifiedWith).toEqual([alert.webhookSecret]);
    expect(JSON.parse(sent!.body)).toMatchObject({ type: "risk_alert.suppressed", data: { observed: 777_000, suppressed: { count: 1 } } });
    expect(route.requests.map((request) => request.headers["webhook-id"]).sort()).toEqual([fired, digest].sort());
  });

  it("reopens and sends a paused alert's failed digests, in a window and by id, as a paused alert sends what it owed", async () => {
    const { alert, route } = await webhookAlert();
    const since = new Date(Date.now() - HOUR_MS);
    const fired = await seedFailed(alert, "webhook", route.url, new Date(since.getTime() + 1_000));
    const digest = await seedFailed(alert, "webhook", route.url, new Date(since.getTime() + 5_000), "digest");
    const later = await seedFailed(alert, "webhook", route.url, new Date(Date.now() + 60_000), "digest");
    const pause = await t.app.inject({ method: "PATCH", url: `/v1/risk/alerts/${alert.alertId}`, headers: bearer(alice), payload: { status: "paused" } });
    expect(pause.statusCode).toBe(200);

    expect((await redeliverWindow(alert.alertId, { since: since.toISOString() })).json()).toEqual({ redelivered: 2, notificationIds: [fired, digest], more: false });
    expect((await settled(fired)).status).toBe("delivered");
    expect((await settled(digest)).status).toBe("delivered");
    expect(route.requests.some((request) => request.headers["webhook-id"] === digest)).toBe(true);

    expect((await redeliver(later)).statusCode).toBe(202);
    expect((await settled(later)).status).toBe("delivered");
  });

  it("answers an empty window, not a 400, for a window wholly before 1970 (until later than since)", async () => {
    const { alert } = await webhookAlert();
    const res = await redeliverWindow(alert.alertId, { since: "0001-01-01T00:00:00Z", until: "0001-01-02T00:00:00Z" });
    expect(res.statusCode, res.body).toBe(202);
    expect(res.json()).toEqual({ redelivered: 0, notificationIds: [], more: false });
    expect(errorPaths(expectProblem(await redeliverWindow(alert.alertId, { since: "0001-01-02T00:00:00Z", until: "0001-01-01T00:00:00Z" }), 400, "validation_failed"))).toEqual([
      "body.until",
    ]);
  });

  it("reopens at most 1,000 a request and says that more are left", async () => {
    const { alert, route } = await webhookAlert();
    const since = new Date(Date.now() - HOUR_MS);
    const ids = Array.from({ length: 1_001 }, (_, i) => newId("ntf", since.getTime() + i));
    await t.deps.sql`
      insert into alert_events (id, alert_id, dedupe_key, condition, observed, reason, created_at)
      select 'evt_of_' || id, ${alert.alertId}, id, 'large_transfer', 25000, 'a large transfer', ${since.toISOString()}::timestamptz
      from unnest(${ids}::text[]) as given(id)`;
    await t.deps.sql`
      insert into notifications (id, alert_id, event_id, channel, destination, payload, status, attempt_count, created_at, updated_at)
      select id, ${alert.alertId}, 'evt_of_' || id, 'webhook', ${route.url}, ${JSON.stringify(samplePayload(alert))}::jsonb, 'failed', 2,
             ${since.toISOString()}::timestamptz + (ord || ' ms')::interval, ${since.toISOString()}::timestamptz
      from unnest(${ids}::text[]) with ordinality as given(id, ord)`;

    const first = (await redeliverWindow(alert.alertId, { since: since.toISOString() })).json<{ redelivered: number; notificationIds: string[]; more: boolean }>();
    expect(first).toMatchObject({ redelivered: 1_000, more: true });
    expect(first.notificationIds).toEqual(ids.slice(0, 1_000));
    expect((await redeliverWindow(alert.alertId, { since: since.toISOString() })).json()).toEqual({ redelivered: 1, notificationIds: [ids[1_000]], more: false });
    await waitFor("the 1,001 webhooks to be sent", async () => {
      const [row] = await t.deps.sql<{ n: number }[]>`select count(*)::int as n from notifications where alert_id = ${alert.alertId} and status = 'delivered'`;
      return row!.n === 1_001;
    }, 60_000);
  });

  it("refuses a window that is not one, and a disabled alert, and another caller's alert", async () => {
    const { alert } = await webhookAlert();
    const since = new Date(Date.now() - HOUR_MS).toISOString();
    expect(errorPaths(expectProblem(await redeliverWindow(alert.alertId, { since: "yesterday" }), 400, "validation_failed"))).toEqual(["body.since"]);
    expect(errorPaths(expectProblem(await redeliverWindow(alert.alertId, {}), 400, "validation_failed"))).toEqual(["body.since"]);
    expect(errorPaths(expectProblem(await redeliverWindow(alert.alertId, { since, until: since }), 400, "validation_failed"))).toEqual(["body.until"]);
    expect(errorPaths(expectProblem(await redeliverWindow(alert.alertId, { since, status: "failed" }), 400, "validation_failed"))).toEqual(["body.status"]);
    // Before any notification could be (and before the year 1 PostgreSQL has): an empty window, not a 500.
    expect((await redeliverWindow(alert.alertId, { since: "0000-01-01T00:00:00Z" })).json()).toMatchObject({ redelivered: 0 });
    expectProblem(await redeliverWindow(alert.alertId, { since }, bob), 404, "not_found");
    await t.deps.sql`update alerts set status = 'disabled' where id = ${alert.alertId}`;
    expect(expectProblem(await redeliverWindow(alert.alertId, { since }), 409, "conflict").detail).toContain("re-enable it first");
  });
});

/** An email alert of the caller with `count` failed notifications of events it fired. */
async function failedNotifications(app: TestApp, token: string, count: number): Promise<{ alertId: string; alert: Alert; ids: string[] }> {
  const wallet = await trackWallet(app, token);
  const created = await app.app.inject({
    method: "POST",
    url: "/v1/risk/alerts",
    headers: bearer(token),
    payload: { walletId: wallet.walletId, condition: "unusual_activity", notificationMethod: "email", recipient: "desk@example.com" },
  });
  const alert = { alertId: created.json<{ alertId: string }>().alertId, walletId: wallet.walletId, address: wallet.address };
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const id = newId("ntf");
    // A second ago: a window ends at the request's now, exclusive, and a notification dated in
    // the very millisecond of the request fell outside it (a fresh CI clone found the last of
    // three missing: `more: false`).
    const createdAt = new Date(Date.now() - 1_000);
    const { eventId } = await insertEvent(app, alert.alertId, { createdAt });
    await insertNotification(app.deps.sql, { id, alertId: alert.alertId, eventId, channel: "email", destination: "desk@example.com", payload: samplePayload(alert), createdAt });
    await app.deps.sql`update notifications set status = 'failed' where id = ${id}`;
    ids.push(id);
  }
  return { alertId: alert.alertId, alert, ids };
}

/** Makes an update of a notification listed in `refused_notification_updates` fail, as a statement error would. */
async function installNotificationUpdateRefusal(app: TestApp): Promise<void> {
  await app.deps.sql.unsafe(`
    create table refused_notification_updates (notification_id text primary key);
    create function refuse_notification_update() returns trigger language plpgsql as $$
    begin
      if exists (select 1 from refused_notification_updates where notification_id = new.id) then
        raise exception 'notification update refused by the test';
      end if;
      return new;
    end $$;
    create trigger refuse_notification_update before update on notifications
      for each row execute function refuse_notification_update();`);
}

describe("the hourly quota of redeliveries", () => {
  let q: TestApp;
  beforeAll(async () => {
    q = await startTestApp("redelivery-quota", { REDELIVERIES_PER_HOUR: "2" }, { now: clockClearOfBoundary(HOUR_MS) });
    await installNotificationUpdateRefusal(q);
  });
  afterAll(async () => {
    await q?.close();
  });

  it("gives back what a request was granted when its transaction then fails: nothing was reopened", async () => {
    const frank = await q.token("frank");
    const { alertId, ids } = await failedNotifications(q, frank, 2);
    await q.deps.sql`insert into refused_notification_updates (notification_id) values (${ids[0]!})`;
    const since = new Date(Date.now() - HOUR_MS).toISOString();
    const single = await q.app.inject({ method: "POST", url: `/v1/notifications/${ids[0]}/redeliver`, headers: bearer(frank) });
    expect(single.statusCode, single.body).toBe(500);
    const bulk = await q.app.inject({ method: "POST", url: `/v1/risk/alerts/${alertId}/notifications/redeliver`, headers: bearer(frank), payload: { since } });
    expect(bulk.statusCode, bulk.body).toBe(500);

    await q.deps.sql`delete from refused_notification_updates`;
    const again = await q.app.inject({ method: "POST", url: `/v1/risk/alerts/${alertId}/notifications/redeliver`, headers: bearer(frank), payload: { since } });
    expect(again.json()).toEqual({ redelivered: 2, notificationIds: ids, more: false });
  });

  it("refuses a disabled alert's failed digest by id as it refuses the alert's other notifications, taking none of the hour's quota", async () => {
    const hana = await q.token("hana");
    const disabled = await failedNotifications(q, hana, 1);
    const digest = await seedFailed(disabled.alert, "email", "desk@example.com", new Date(), "digest", q);
    await q.deps.sql`update alerts set status = 'disabled', disabled_reason = 'the mailbox answered 550' where id = ${disabled.alertId}`;
    const redeliverAs = (id: string) => q.app.inject({ method: "POST", url: `/v1/notifications/${id}/redeliver`, headers: bearer(hana) });

    const ofEvent = expectProblem(await redeliverAs(disabled.ids[0]!), 409, "conflict");
    const ofDigest = expectProblem(await redeliverAs(digest), 409, "conflict");
    expect(ofDigest.detail).toBe(ofEvent.detail);
    expect(ofDigest.detail).toContain(`alert ${disabled.alertId} is disabled`);
    const [row] = await q.deps.sql<{ status: string; attemptCount: number }[]>`select status, attempt_count as "attemptCount" from notifications where id = ${digest}`;
    expect(row).toEqual({ status: "failed", attemptCount: 2 });

    // The hour's 2 are all left.
    const other = await failedNotifications(q, hana, 2);
    const since = new Date(Date.now() - HOUR_MS).toISOString();
    const bulk = await q.app.inject({ method: "POST", url: `/v1/risk/alerts/${other.alertId}/notifications/redeliver`, headers: bearer(hana), payload: { since } });
    expect(bulk.json()).toEqual({ redelivered: 2, notificationIds: other.ids, more: false });
  });

  it("reopens only what the caller's hour has left, says more are left, then answers 429 with Retry-After, and leaves other callers alone", async () => {
    const carol = await q.token("carol");
    const { alertId, ids } = await failedNotifications(q, carol, 3);
    const since = new Date(Date.now() - HOUR_MS).toISOString();
    const bulk = await q.app.inject({ method: "POST", url: `/v1/risk/alerts/${alertId}/notifications/redeliver`, headers: bearer(carol), payload: { since } });
    expect(bulk.json()).toEqual({ redelivered: 2, notificationIds: ids.slice(0, 2), more: true });

    const refused = await q.app.inject({ method: "POST", url: `/v1/notifications/${ids[2]}/redeliver`, headers: bearer(carol) });
    expectProblem(refused, 429, "rate_limited");
    const retryAfter = Number(refused.headers["retry-after"]);
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(3600);
    // The quota's RateLimit-*, not the per-minute limiter's: RateLimit-Reset is Retry-After.
    expect(refused.headers).toMatchObject({ "ratelimit-limit": "2", "ratelimit-remaining": "0", "ratelimit-reset": String(retryAfter) });
    const window = await q.app.inject({ method: "POST", url: `/v1/risk/alerts/${alertId}/notifications/redeliver`, headers: bearer(carol), payload: { since } });
    expectProblem(window, 429, "rate_limited");
    expect(window.headers).toMatchObject({ "ratelimit-remaining": "0", "ratelimit-reset": window.headers["retry-after"] });
    const [row] = await q.deps.sql<{ status: string }[]>`select status from notifications where id = ${ids[2]!}`;
    expect(row!.status).toBe("failed");

    const dave = await q.token("dave");
    const daves = await failedNotifications(q, dave, 1);
    expect((await q.app.inject({ method: "POST", url: `/v1/notifications/${daves.ids[0]}/redeliver`, headers: bearer(dave) })).statusCode).toBe(202);
  });
});

describe("redelivery turned off (REDELIVERIES_PER_HOUR=0)", () => {
  let off: TestApp;
  beforeAll(async () => {
    off = await startTestApp("redelivery-off", { REDELIVERIES_PER_HOUR: "0" });
  });
  afterAll(async () => {
    await off?.close();
  });

  it("answers 403 on both routes before looking at the request: an empty window, a notification that has not failed", async () => {
    const gina = await off.token("gina");
    const { alertId, ids } = await failedNotifications(off, gina, 1);
    await off.deps.sql`update notifications set status = 'delivered' where id = ${ids[0]!}`;
    const bulk = await off.app.inject({ method: "POST", url: `/v1/risk/alerts/${alertId}/notifications/redeliver`, headers: bearer(gina), payload: { since: new Date(Date.now() - HOUR_MS).toISOString() } });
    expect(expectProblem(bulk, 403, "forbidden").detail).toBe("redelivery is turned off here (REDELIVERIES_PER_HOUR=0)");
    const single = await off.app.inject({ method: "POST", url: `/v1/notifications/${ids[0]}/redeliver`, headers: bearer(gina) });
    expect(expectProblem(single, 403, "forbidden").detail).toBe("redelivery is turned off here (REDELIVERIES_PER_HOUR=0)");
  });
});

describe("the log of redeliveries", () => {
  it("says at info who redelivered which notification of which alert, without its destination", async () => {
    const logged = await startLoggedApp("redelivery-log", {}, "info");
    try {
      const token = await mintToken(TEST_JWT_SECRET, { sub: "erin", scope: "wallets:write alerts:write", ttlSeconds: 600 }, logged.deps.config.jwt);
      const wallet = await logged.app.inject({ method: "POST", url: "/v1/wallets", headers: bearer(token), payload: { address: randomAddress() } });
      const { walletId, address } = wallet.json<{ walletId: string; address: string }>();
      const created = await logged.app.inject({
        method: "POST",
        url: "/v1/risk/alerts",
        headers: bearer(token),
        payload: { walletId, condition: "unusual_activity", notificationMethod: "email", recipient: "secret-desk@example.com" },
      });
      const { alertId } = created.json<{ alertId: string }>();
      const id = newId("ntf");
      const alert = { alertId, walletId, address };
      await insertNotification(logged.deps.sql, { id, alertId, eventId: null, channel: "email", destination: "secret-desk@example.com", payload: samplePayload(alert), createdAt: new Date() });
      await logged.deps.sql`update notifications set status = 'failed' where id = ${id}`;

      expect((await logged.app.inject({ method: "POST", url: `/v1/notifications/${id}/redeliver`, headers: bearer(token) })).statusCode).toBe(202);
      const line = logged.lines.map((text) => JSON.parse(text) as Record<string, unknown>).find((entry) => entry.msg === "notification redelivered at its owner's request");
      expect(line).toMatchObject({ notificationId: id, alertId, owner: "erin" });
      expect(["info", 30]).toContain(line!.level);
      expect(logged.lines.join("\n")).not.toContain("secret-desk@example.com");
    } finally {
      await logged.close();
    }
  });
});
