import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { clockClearOfBoundary, HOUR_MS } from "../helpers/clock.ts";
import { startDeliveryWorkers, type DeliveryWorkers } from "../helpers/delivery.ts";
import { bearer, expectProblem, trackWallet } from "../helpers/seed.ts";
import { parseMessage } from "../helpers/smtp-peer.ts";
import { startWebhookReceiver, type WebhookReceiver } from "../helpers/webhook-receiver.ts";

let t: TestApp;
let receiver: WebhookReceiver;
let workers: DeliveryWorkers;
let outboxDir: string;
let alice: string;
let bob: string;
let hooks = 0;

beforeAll(async () => {
  t = await startTestApp("notifications-api", { RETRY_SCHEDULE: "100ms" });
  receiver = await startWebhookReceiver();
  outboxDir = await mkdtemp(join(tmpdir(), "wa-outbox-"));
  workers = startDeliveryWorkers(t, { outboxDir, webhookTimeoutMs: 2_000 });
  alice = await t.token("alice");
  bob = await t.token("bob");
});
afterAll(async () => {
  await workers?.close();
  await receiver?.close();
  await t?.close();
  if (outboxDir) await rm(outboxDir, { recursive: true, force: true });
});

async function createAlert(token: string, body: Record<string, unknown>): Promise<{ alertId: string; webhookSecret?: string }> {
  const wallet = await trackWallet(t, token, { alias: "Cold storage" });
  const res = await t.app.inject({
    method: "POST",
    url: "/v1/risk/alerts",
    headers: bearer(token),
    payload: { walletId: wallet.walletId, condition: "large_transfer", threshold: 5_000, ...body },
  });
  if (res.statusCode !== 201) throw new Error(`POST /v1/risk/alerts answered ${res.statusCode}: ${res.body}`);
  return res.json();
}

async function webhookAlert(token = alice) {
  const route = receiver.route(`/api-hook-${++hooks}`);
  const alert = await createAlert(token, { notificationMethod: "webhook", webhookUrl: route.url });
  route.verifyWith(alert.webhookSecret!);
  return { route, alert };
}

type NotificationBody = {
  notificationId: string;
  alertId: string;
  eventId: string | null;
  channel: string;
  status: string;
  createdAt: string;
  deliveredAt: string | null;
  attempts: Array<{ at: string; durationMs: number; statusCode: number | null; error: string | null; destination: string | null }>;
};

/** Polls GET /v1/notifications/{id} until the notification is delivered or failed (bounded). */
async function settled(id: string, token = alice): Promise<NotificationBody> {
  const deadline = Date.now() + 15_000;
  let body: NotificationBody | undefined;
  while (Date.now() < deadline) {
    const res = await t.app.inject({ url: `/v1/notifications/${id}`, headers: bearer(token) });
    expect(res.statusCode).toBe(200);
    body = res.json<NotificationBody>();
    if (body.status === "delivered" || body.status === "failed") return body;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`notification ${id} did not settle: ${JSON.stringify(body)}`);
}

describe("POST /v1/risk/alerts/{id}/test", () => {
  it("queues a signed risk_alert.test webhook and answers 202 with its id", async () => {
    const { route, alert } = await webhookAlert();
    const res = await t.app.inject({ method: "POST", url: `/v1/risk/alerts/${alert.alertId}/test`, headers: bearer(alice) });
    expect(res.statusCode).toBe(202);
    const { notificationId } = res.json<{ notificationId: string }>();
    expect(notificationId).toMatch(/^ntf_/);
    expect(res.headers.location).toBe(`/v1/notifications/${notificationId}`);

    const body = await settled(notificationId);
    expect(body).toMatchObject({ notificationId, alertId: alert.alertId, eventId: null, channel: "webhook", status: "delivered" });
    expect(body.deliveredAt).toMatch(/Z$/);
    expect(body.attempts).toEqual([{ at: expect.stringMatching(/Z$/), durationMs: expect.any(Number), statusCode: 200, error: null, destination: route.url }]);

    const [request] = route.requests;
    expect(request!.headers["webhook-id"]).toBe(notificationId);
    expect(request!.verifiedWith).toEqual([alert.webhookSecret]);
    const payload = JSON.parse(request!.body);
    expect(payload).toMatchObject({
      type: "risk_alert.test",
      data: { alertId: alert.alertId, alias: "Cold storage", condition: "large_transfer", threshold: 5_000, observed: null },
    });
    expect(payload.data.reason).toBe("Test notification for your large_transfer alert on Cold storage.");
    // An alert without a token filter: any token, and no `token` key.
    expect(payload.data).not.toHaveProperty("token");
  });

  it("carries a large_transfer alert's token filter as data.token, the threshold's unit", async () => {
    const route = receiver.route(`/api-hook-${++hooks}`);
    const alert = await createAlert(alice, { notificationMethod: "webhook", webhookUrl: route.url, token: "USDC" });
    route.verifyWith(alert.webhookSecret!);
    const res = await t.app.inject({ method: "POST", url: `/v1/risk/alerts/${alert.alertId}/test`, headers: bearer(alice) });
    expect(res.statusCode).toBe(202);
    await settled(res.json<{ notificationId: string }>().notificationId);
    const payload = JSON.parse(route.requests[0]!.body);
    expect(payload.data).toMatchObject({ threshold: 5_000, token: "USDC", observed: null });
  });

  it("states a token-filtered test's threshold in that token in the email, not 'in the transferred token'", async () => {
    const alert = await createAlert(alice, { notificationMethod: "email", recipient: "alice@example.com", token: "usdc" });
    const res = await t.app.inject({ method: "POST", url: `/v1/risk/alerts/${alert.alertId}/test`, headers: bearer(alice) });
    const { notificationId } = res.json<{ notificationId: string }>();
    expect(await settled(notificationId)).toMatchObject({ status: "delivered" });
    // No SMTP_URL: the message is the outbox's .eml file.
    const email = parseMessage(await readFile(join(outboxDir, `${notificationId}.eml`), "utf8"));
    expect(email.text).toContain("Threshold:    5,000 USDC\n");
    expect(email.text).not.toContain("in the transferred token");
  });

  it("sends the test of an email alert to its recipient", async () => {
    const alert = await createAlert(alice, { notificationMethod: "email", recipient: "alice@example.com" });
    const res = await t.app.inject({ method: "POST", url: `/v1/risk/alerts/${alert.alertId}/test`, headers: bearer(alice) });
    expect(res.statusCode).toBe(202);
    const body = await settled(res.json<{ notificationId: string }>().notificationId);
    expect(body).toMatchObject({ channel: "email", status: "delivered" });
  });

  it("answers 404 for another caller's alert and for an unknown one", async () => {
    const { alert } = await webhookAlert(alice);
    expectProblem(await t.app.inject({ method: "POST", url: `/v1/risk/alerts/${alert.alertId}/test`, headers: bearer(bob) }), 404, "not_found");
    expectProblem(await t.app.inject({ method: "POST", url: "/v1/risk/alerts/alr_nothing/test", headers: bearer(alice) }), 404, "not_found");
  });

  it("needs alerts:write", async () => {
    const { alert } = await webhookAlert();
    const reader = await t.token("alice", "alerts:read");
    const res = await t.app.inject({ method: "POST", url: `/v1/risk/alerts/${alert.alertId}/test`, headers: bearer(reader) });
    expectProblem(res, 403, "forbidden");
    expect(res.headers["www-authenticate"]).toContain('error="insufficient_scope"');
  });

  it("rejects a body with fields", async () => {
    const { alert } = await webhookAlert();
    const res = await t.app.inject({
      method: "POST",
      url: `/v1/risk/alerts/${alert.alertId}/test`,
      headers: bearer(alice),
      payload: { urgent: true },
    });
    expectProblem(res, 400, "validation_failed");
  });
});

describe("POST /v1/risk/alerts/{id}/rotate-secret", () => {
  it("returns a new secret and keeps the old one signing for 24 hours", async () => {
    const { route, alert } = await webhookAlert();
    const before = Date.now();
    const res = await t.app.inject({ method: "POST", url: `/v1/risk/alerts/${alert.alertId}/rotate-secret`, headers: bearer(alice) });
    expect(res.statusCode).toBe(200);
    const { webhookSecret, previousSecretExpiresAt } = res.json<{ webhookSecret: string; previousSecretExpiresAt: string }>();
    expect(webhookSecret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(webhookSecret).not.toBe(alert.webhookSecret);
    const expiresIn = Date.parse(previousSecretExpiresAt) - before;
    expect(expiresIn).toBeGreaterThanOrEqual(24 * 3_600_000 - 1_000);
    expect(expiresIn).toBeLessThanOrEqual(24 * 3_600_000 + 60_000);

    route.verifyWith(webhookSecret);
    const test = await t.app.inject({ method: "POST", url: `/v1/risk/alerts/${alert.alertId}/test`, headers: bearer(alice) });
    await settled(test.json<{ notificationId: string }>().notificationId);
    expect(route.requests[0]!.verifiedWith.sort()).toEqual([alert.webhookSecret, webhookSecret].sort());
  });

  it("keeps the original secret signing through a second rotation within the day (a retried rotation)", async () => {
    const { route, alert } = await webhookAlert();
    const rotate = async () =>
      (await t.app.inject({ method: "POST", url: `/v1/risk/alerts/${alert.alertId}/rotate-secret`, headers: bearer(alice) })).json<{
        webhookSecret: string;
      }>().webhookSecret;
    const unseen = await rotate(); // its answer lost on the way: the caller tries again
    const latest = await rotate();

    route.verifyWith(latest, unseen);
    const test = await t.app.inject({ method: "POST", url: `/v1/risk/alerts/${alert.alertId}/test`, headers: bearer(alice) });
    await settled(test.json<{ notificationId: string }>().notificationId);
    expect(route.requests[0]!.verifiedWith.sort()).toEqual([alert.webhookSecret, unseen, latest].sort());
  });

  it("signs with at most five replaced secrets besides the current one", async () => {
    const { route, alert } = await webhookAlert();
    for (let i = 0; i < 7; i++) {
      await t.app.inject({ method: "POST", url: `/v1/risk/alerts/${alert.alertId}/rotate-secret`, headers: bearer(alice) });
    }
    const test = await t.app.inject({ method: "POST", url: `/v1/risk/alerts/${alert.alertId}/test`, headers: bearer(alice) });
    await settled(test.json<{ notificationId: string }>().notificationId);
    expect(String(route.requests[0]!.headers["webhook-signature"]).split(" ")).toHaveLength(6);
  });

  it("answers 409 for an alert that is not a webhook alert", async () => {
    const alert = await createAlert(alice, { notificationMethod: "sms", recipient: "+14155550009" });
    const res = await t.app.inject({ method: "POST", url: `/v1/risk/alerts/${alert.alertId}/rotate-secret`, headers: bearer(alice) });
    expectProblem(res, 409, "conflict");
  });

  it("answers 404 for another caller's alert and changes nothing", async () => {
    const { route, alert } = await webhookAlert(alice);
    expectProblem(
      await t.app.inject({ method: "POST", url: `/v1/risk/alerts/${alert.alertId}/rotate-secret`, headers: bearer(bob) }),
      404,
      "not_found",
    );
    const test = await t.app.inject({ method: "POST", url: `/v1/risk/alerts/${alert.alertId}/test`, headers: bearer(alice) });
    await settled(test.json<{ notificationId: string }>().notificationId);
    expect(String(route.requests[0]!.headers["webhook-signature"]).split(" ")).toHaveLength(1);
  });
});

describe("GET /v1/notifications/{id}", () => {
  it("shows a failed delivery with each attempt's status and error", async () => {
    const { route, alert } = await webhookAlert();
    route.respond({ status: 503 }, { status: 500 });
    const res = await t.app.inject({ method: "POST", url: `/v1/risk/alerts/${alert.alertId}/test`, headers: bearer(alice) });
    const body = await settled(res.json<{ notificationId: string }>().notificationId);
    expect(body.status).toBe("failed");
    expect(body.deliveredAt).toBeNull();
    expect(body.attempts.map((a) => [a.statusCode, a.error])).toEqual([
      [503, "HTTP 503"],
      [500, "HTTP 500 (gave up after 2 attempts)"],
    ]);
  });

  it("answers 404 for another caller's notification", async () => {
    const { alert } = await webhookAlert(alice);
    const res = await t.app.inject({ method: "POST", url: `/v1/risk/alerts/${alert.alertId}/test`, headers: bearer(alice) });
    const { notificationId } = res.json<{ notificationId: string }>();
    expectProblem(await t.app.inject({ url: `/v1/notifications/${notificationId}`, headers: bearer(bob) }), 404, "not_found");
    expectProblem(await t.app.inject({ url: "/v1/notifications/ntf_unknown", headers: bearer(alice) }), 404, "not_found");
  });

  it("needs a token and the alerts:read scope", async () => {
    expectProblem(await t.app.inject({ url: "/v1/notifications/ntf_x" }), 401, "unauthorized");
    const writer = await t.token("alice", "wallets:read");
    expectProblem(await t.app.inject({ url: "/v1/notifications/ntf_x", headers: bearer(writer) }), 403, "forbidden");
  });
});

describe("the hourly quota of test notifications", () => {
  let q: TestApp;
  beforeAll(async () => {
    q = await startTestApp("test-quota", { TEST_NOTIFICATIONS_PER_HOUR: "2" }, { now: clockClearOfBoundary(HOUR_MS) });
  });
  afterAll(async () => {
    await q?.close();
  });

  async function alertOf(token: string): Promise<string> {
    const wallet = await trackWallet(q, token, { alias: "Call +1 900 555 0199" });
    const res = await q.app.inject({
      method: "POST",
      url: "/v1/risk/alerts",
      headers: bearer(token),
      payload: { walletId: wallet.walletId, condition: "unusual_activity", notificationMethod: "sms", recipient: "+14155550123" },
    });
    return res.json().alertId;
  }
  const sendTest = (token: string, alertId: string) =>
    q.app.inject({ method: "POST", url: `/v1/risk/alerts/${alertId}/test`, headers: bearer(token) });

  it("refuses a caller's test beyond the quota with 429 and Retry-After, writes nothing for it, and leaves other callers alone", async () => {
    const carol = await q.token("carol");
    const [first, second] = [await alertOf(carol), await alertOf(carol)];
    expect((await sendTest(carol, first)).statusCode).toBe(202);
    expect((await sendTest(carol, second)).statusCode).toBe(202);

    const refused = await sendTest(carol, first);
    expectProblem(refused, 429, "rate_limited");
    const retryAfter = Number(refused.headers["retry-after"]);
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(3600);
    // The quota's RateLimit-*, not the per-minute limiter's (577 left, reset in 3 s): a client
    // retrying after RateLimit-Reset waits as long as Retry-After says.
    expect(refused.headers).toMatchObject({ "ratelimit-limit": "2", "ratelimit-remaining": "0", "ratelimit-reset": String(retryAfter) });
    const [row] = await q.deps.sql<{ n: number }[]>`
      select count(*)::int as n from notifications n join alerts a on a.id = n.alert_id where a.owner = 'carol'`;
    expect(row!.n).toBe(2);

    const dave = await q.token("dave");
    expect((await sendTest(dave, await alertOf(dave))).statusCode).toBe(202);
  });
});
