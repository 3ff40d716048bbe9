import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ALL_SCOPES, startTestApp, type TestApp } from "../helpers/app.ts";
import { auth, fieldErrors, insertEvent, insertWallet, problem, storedAlert } from "../helpers/alert-fixtures.ts";

let t: TestApp;
let alice: string;
let bob: string;

beforeAll(async () => {
  t = await startTestApp("alerts");
  alice = await t.token("alice");
  bob = await t.token("bob");
});
afterAll(async () => {
  await t.close();
});

const HOOK = "http://127.0.0.1:9999/hooks/risk";

async function createAlert(token: string, payload: Record<string, unknown>): Promise<Record<string, unknown> & { alertId: string }> {
  const res = await t.app.inject({ method: "POST", url: "/v1/risk/alerts", headers: auth(token), payload });
  if (res.statusCode !== 201) throw new Error(`create answered ${res.statusCode}: ${res.body}`);
  return res.json();
}

const webhookAlert = (walletId: string, extra: Record<string, unknown> = {}) =>
  createAlert(alice, { walletId, condition: "large_transfer", threshold: 1000, notificationMethod: "webhook", webhookUrl: HOOK, ...extra });

const get = (url: string, token = alice) => t.app.inject({ url, headers: auth(token) });
const patch = (alertId: string, payload: unknown, token = alice) =>
  t.app.inject({ method: "PATCH", url: `/v1/risk/alerts/${alertId}`, headers: auth(token), payload: payload as object });
const remove = (alertId: string, token = alice) =>
  t.app.inject({ method: "DELETE", url: `/v1/risk/alerts/${alertId}`, headers: auth(token) });

/** Gives the alerts distinct creation times, newest first in the order given. */
async function spaceCreationTimes(alertIds: string[]): Promise<void> {
  for (const [index, alertId] of alertIds.entries()) {
    await t.deps.sql`update alerts set created_at = now() - make_interval(mins => ${index}) where id = ${alertId}`;
  }
}

describe("GET /v1/risk/alerts", () => {
  let listOwner: string;
  let walletA: string;
  let walletB: string;
  let newestFirst: string[];

  beforeAll(async () => {
    listOwner = await t.token("carol");
    walletA = (await insertWallet(t, "carol")).walletId;
    walletB = (await insertWallet(t, "carol")).walletId;
    const ids: string[] = [];
    for (const walletId of [walletA, walletB, walletA, walletB, walletA]) {
      ids.push((await createAlert(listOwner, { walletId, condition: "unusual_activity", notificationMethod: "webhook", webhookUrl: HOOK })).alertId);
    }
    newestFirst = [...ids].reverse();
    await spaceCreationTimes(newestFirst);
    await t.deps.sql`update alerts set status = 'paused' where id = ${newestFirst[1]!}`;
    await webhookAlert((await insertWallet(t, "alice")).walletId); // someone else's, never listed
  });

  it("lists the caller's alerts newest first with the default page and limit", async () => {
    const res = await get("/v1/risk/alerts", listOwner);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ total: 5, page: 1, limit: 25 });
    expect(body.alerts.map((a: { alertId: string }) => a.alertId)).toEqual(newestFirst);
    expect(res.body).not.toContain("whsec_");
    expect(body.alerts[0]).not.toHaveProperty("webhookSecret");
  });

  it("pages with page and limit, and answers a page past the end with an empty list", async () => {
    const second = (await get("/v1/risk/alerts?page=2&limit=2", listOwner)).json();
    expect(second).toMatchObject({ total: 5, page: 2, limit: 2 });
    expect(second.alerts.map((a: { alertId: string }) => a.alertId)).toEqual(newestFirst.slice(2, 4));
    const past = (await get("/v1/risk/alerts?page=4&limit=2", listOwner)).json();
    expect(past).toEqual({ alerts: [], total: 5, page: 4, limit: 2, hasMore: false });
    expect((await get("/v1/risk/alerts?page=2&limit=3", listOwner)).json()).toMatchObject({ page: 2, hasMore: false });
    expect((await get("/v1/risk/alerts?page=1&limit=3", listOwner)).json()).toMatchObject({ page: 1, hasMore: true });
  });

  it("pages with after, the alertId of the last alert received, until hasMore is false; total counts them all, page is left out", async () => {
    const first = (await get("/v1/risk/alerts?limit=2", listOwner)).json();
    const second = (await get(`/v1/risk/alerts?limit=2&after=${first.alerts[1].alertId}`, listOwner)).json();
    expect(second).toMatchObject({ total: 5, limit: 2, hasMore: true });
    expect(second).not.toHaveProperty("page");
    expect(second.alerts.map((a: { alertId: string }) => a.alertId)).toEqual(newestFirst.slice(2, 4));
    const last = (await get(`/v1/risk/alerts?limit=2&after=${second.alerts[1].alertId}`, listOwner)).json();
    expect(last).toMatchObject({ total: 5, hasMore: false });
    expect(last.alerts.map((a: { alertId: string }) => a.alertId)).toEqual(newestFirst.slice(4));
    // With the filters: the cursor keeps to them.
    const paused = (await get(`/v1/risk/alerts?status=active&after=${newestFirst[0]}`, listOwner)).json();
    expect(paused.alerts.map((a: { alertId: string }) => a.alertId)).toEqual(newestFirst.slice(2));
  });

  it("misses no alert with after when alerts are deleted and created between pages, the cursor's own alert included", async () => {
    const syncer = await t.token("syncing-bot");
    const walletId = (await insertWallet(t, "syncing-bot")).walletId;
    const make = async (threshold: number) =>
      (await createAlert(syncer, { walletId, condition: "large_transfer", threshold, notificationMethod: "webhook", webhookUrl: HOOK })).alertId;
    const ids: string[] = [];
    for (const threshold of [2, 3, 4, 5, 6, 7]) ids.push(await make(threshold));
    const seen: number[] = [];
    const page1 = (await get("/v1/risk/alerts?limit=2", syncer)).json();
    seen.push(...page1.alerts.map((a: { threshold: number }) => a.threshold));
    expect(seen).toEqual([7, 6]);
    // The first alert listed and the cursor itself go, and a new one comes, before the next read.
    for (const gone of [page1.alerts[0].alertId, page1.alerts[1].alertId]) expect((await remove(gone, syncer)).statusCode).toBe(204);
    await make(8);
    let after = page1.alerts[1].alertId;
    for (let more = page1.hasMore; more; ) {
      const page = (await get(`/v1/risk/alerts?limit=2&after=${after}`, syncer)).json();
      seen.push(...page.alerts.map((a: { threshold: number }) => a.threshold));
      after = page.alerts.at(-1).alertId;
      more = page.hasMore;
    }
    expect(seen).toEqual([7, 6, 5, 4, 3, 2]);
    // By page number the same deletes skip one: page 2 starts two alerts into what is left.
    expect((await get("/v1/risk/alerts?limit=2&page=2", syncer)).json().alerts.map((a: { threshold: number }) => a.threshold)).toEqual([4, 3]);
  });

  it.each([
    ["page=2&after=alr_01m8gqenacjxp4wxa0p44pn4ya", "query.page must be left out when after is given: after is where the page starts"],
    ["after=alr_nope", "query.after must be the alertId of an alert received (alr_ and 26 characters)"],
    ["after=evt_01m8gqenacjxp4wxa0p44pn4ya", "query.after must be the alertId of an alert received (alr_ and 26 characters)"],
  ])("refuses %s with 400", async (query, error) => {
    expect(fieldErrors(await get(`/v1/risk/alerts?${query}`, listOwner))).toEqual([error]);
  });

  it("filters by walletId and by status", async () => {
    const byWallet = (await get(`/v1/risk/alerts?walletId=${walletB}`, listOwner)).json();
    expect(byWallet.total).toBe(2);
    expect(byWallet.alerts.every((a: { walletId: string }) => a.walletId === walletB)).toBe(true);
    const paused = (await get("/v1/risk/alerts?status=paused", listOwner)).json();
    expect(paused.alerts.map((a: { alertId: string }) => a.alertId)).toEqual([newestFirst[1]]);
    const both = (await get(`/v1/risk/alerts?status=active&walletId=${walletA}`, listOwner)).json();
    expect(both.total).toBe(3);
  });

  it("answers a walletId that names none of the caller's wallets with 404, and one of its wallets without alerts with an empty list", async () => {
    const unknown = await get(`/v1/risk/alerts?walletId=wal_00000000000000000000000000`, listOwner);
    expect(unknown.statusCode, unknown.body).toBe(404);
    expect(unknown.json()).toMatchObject({ code: "not_found", detail: expect.stringContaining("wal_00000000000000000000000000") });
    const othersWallet = await get(`/v1/risk/alerts?walletId=${walletB}`, await t.token("someone-else"));
    expect(othersWallet.statusCode).toBe(404);
    const quiet = await insertWallet(t, "carol");
    expect((await get(`/v1/risk/alerts?walletId=${quiet.walletId}&status=paused`, listOwner)).json()).toMatchObject({ alerts: [], total: 0 });
  });

  it.each([
    ["limit=0", "query.limit must be a whole number from 1 to 100"],
    ["limit=101", "query.limit must be a whole number from 1 to 100"],
    ["page=0", "query.page must be a whole number from 1 to 1000000"],
  ])("refuses %s with 400 naming the parameter and its range", async (query, error) => {
    expect(fieldErrors(await get(`/v1/risk/alerts?${query}`, listOwner))).toEqual([error]);
  });

  it.each(["limit=abc", "page=1.5", "limit=-1", "status=deleted", "sort=newest"])("refuses %s with 400", async (query) => {
    const name = query.split("=")[0];
    expect(fieldErrors(await get(`/v1/risk/alerts?${query}`, listOwner)).some((e) => e.startsWith(`query.${name}`))).toBe(true);
  });
});

describe("PATCH /v1/risk/alerts/{alertId}", () => {
  let walletId: string;
  beforeAll(async () => {
    walletId = (await insertWallet(t, "alice")).walletId;
  });

  it("pauses and resumes an alert and returns it", async () => {
    const alert = await webhookAlert(walletId);
    const paused = await patch(alert.alertId, { status: "paused" });
    expect(paused.statusCode).toBe(200);
    const { status: _status, ...unchanged } = alert;
    delete unchanged.webhookSecret;
    expect(paused.json()).toEqual({ ...unchanged, status: "paused" });
    expect((await get(`/v1/risk/alerts/${alert.alertId}`)).json().status).toBe("paused");
    expect((await patch(alert.alertId, { status: "active" })).json().status).toBe("active");
  });

  it("re-activates a disabled alert and clears its failure record", async () => {
    const alert = await webhookAlert(walletId);
    await t.deps.sql`update alerts set status = 'disabled', failing_since = now() - interval '25 hours',
      disabled_reason = 'the webhook answered 410 Gone' where id = ${alert.alertId}`;
    expect((await get(`/v1/risk/alerts/${alert.alertId}`)).json()).toMatchObject({
      status: "disabled",
      disabledReason: "the webhook answered 410 Gone",
    });
    const res = await patch(alert.alertId, { status: "active" });
    expect(res.json()).toMatchObject({ status: "active", disabledReason: null });
    const stored = await storedAlert(t, alert.alertId);
    expect(stored?.failingSince).toBeNull();
    expect(stored?.disabledReason).toBeNull();
  });

  it("changes threshold, cooldownSeconds and webhookUrl together", async () => {
    const alert = await webhookAlert(walletId);
    const res = await patch(alert.alertId, { threshold: 50, cooldownSeconds: 300, webhookUrl: "http://127.0.0.1:9999/other" });
    expect(res.json()).toMatchObject({ threshold: 50, cooldownSeconds: 300, webhookUrl: "http://127.0.0.1:9999/other", status: "active" });
  });

  it("changes the recipient of an email alert and checks it", async () => {
    const alert = await createAlert(alice, { walletId, condition: "large_transfer", threshold: 1, notificationMethod: "email", recipient: "a@example.com" });
    expect((await patch(alert.alertId, { recipient: "b@example.com" })).json().recipient).toBe("b@example.com");
    expect(fieldErrors(await patch(alert.alertId, { recipient: "+15551234567" }))).toEqual([
      "body.recipient must be an email address such as alice@example.com",
    ]);
    expect(fieldErrors(await patch(alert.alertId, { webhookUrl: HOOK }))).toEqual(["body.webhookUrl is only used by webhook alerts, not email"]);
  });

  it("checks a new threshold against the alert's own condition", async () => {
    const alert = await createAlert(alice, { walletId, condition: "risk_score_increase", notificationMethod: "webhook", webhookUrl: HOOK });
    expect(fieldErrors(await patch(alert.alertId, { threshold: 150 }))).toEqual([
      expect.stringMatching(/^body\.threshold must be .* for risk_score_increase alerts$/),
    ]);
    expect((await patch(alert.alertId, { threshold: 25 })).json().threshold).toBe(25);
  });

  it("refuses a risk_score_increase threshold in fractions of a point and keeps the one it had", async () => {
    const alert = await createAlert(alice, { walletId, condition: "risk_score_increase", threshold: 20, notificationMethod: "webhook", webhookUrl: HOOK });
    expect(fieldErrors(await patch(alert.alertId, { threshold: 2.5 }))).toEqual([
      "body.threshold must be a whole number of points from 1 to 100 (a rise of the risk score) for risk_score_increase alerts",
    ]);
    expect((await get(`/v1/risk/alerts/${alert.alertId}`)).json().threshold).toBe(20);
  });

  it.each([
    [{}, "body must change at least one of status, threshold, cooldownSeconds, recipient, webhookUrl"],
    [{ status: "disabled" }, "body.status must be one of active, paused"],
    [{ status: "deleted" }, "body.status must be one of active, paused"],
    [{ threshold: "5" }, "body.threshold must be a number"],
    [{ cooldownSeconds: -5 }, "body.cooldownSeconds must be a whole number from 0 to 604800"],
    [{ recipient: "ops@example.com" }, "body.recipient is not used by webhook alerts (they go to webhookUrl)"],
    [{ condition: "unusual_activity" }, "body.condition cannot change: create a new alert with the condition you want (and delete this one)"],
    [{ token: "USDC" }, "body.token cannot change: create a new alert with the token you want (and delete this one)"],
    [{ notificationMethod: "email" }, "body.notificationMethod cannot change: create a new alert with the channel you want (and delete this one)"],
    [{ walletId: "wal_other" }, "body.walletId cannot change: create the alert on the other wallet (and delete this one)"],
    [{ severity: "high" }, "body.severity is not a known field"],
  ])("refuses %j with 400 and changes nothing", async (payload, error) => {
    const alert = await webhookAlert(walletId);
    expect(fieldErrors(await patch(alert.alertId, payload))).toContain(error);
    const { webhookSecret: _secret, ...before } = alert;
    expect((await get(`/v1/risk/alerts/${alert.alertId}`)).json()).toEqual(before);
  });
});

describe("DELETE /v1/risk/alerts/{alertId}", () => {
  it("answers 204 with no body, after which the alert is gone", async () => {
    const alert = await webhookAlert((await insertWallet(t, "alice")).walletId);
    const res = await remove(alert.alertId);
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe("");
    problem(await get(`/v1/risk/alerts/${alert.alertId}`), 404, "not_found");
    problem(await remove(alert.alertId), 404, "not_found");
  });
});

describe("GET /v1/risk/alerts/{alertId}/events", () => {
  let alertId: string;
  let expected: { eventId: string; signature: string | null; notificationId: string | null }[];

  beforeAll(async () => {
    const walletId = (await insertWallet(t, "alice")).walletId;
    alertId = (await webhookAlert(walletId)).alertId;
    const base = Date.parse("2026-03-01T12:00:00.000Z");
    const written = [];
    for (let i = 0; i < 5; i++) {
      const suppressed = i === 3;
      written.push(
        await insertEvent(t, alertId, {
          createdAt: new Date(base + i * 60_000),
          observed: 1000 + i,
          suppressed,
          notify: !suppressed,
          signature: i === 1 ? null : undefined,
        }),
      );
    }
    expected = written.reverse();
    // Another alert's event never shows up here.
    await insertEvent(t, (await webhookAlert(walletId)).alertId, { createdAt: new Date(base), notify: true });
  });

  it("lists the events newest first with every field, its reason and the notification id when one was sent", async () => {
    const res = await get(`/v1/risk/alerts/${alertId}/events`);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ total: 5, hasMore: false });
    expect(body.events.map((e: { eventId: string }) => e.eventId)).toEqual(expected.map((e) => e.eventId));
    expect(body.events[0]).toEqual({
      eventId: expected[0]!.eventId,
      condition: "large_transfer",
      observed: 1004,
      suppressed: false,
      transactionSignature: expected[0]!.signature,
      reason: "a transfer of 2500 SOL, at or above the 1000 SOL threshold",
      createdAt: "2026-03-01T12:04:00.000Z",
      notificationId: expected[0]!.notificationId,
      digestNotificationId: null,
      // Written as events were before the service kept what they were judged by.
      judgedSettings: null,
      riskScore: null,
      riskFactors: null,
    });
    // The suppressed one was not sent, and the score-change one has no transaction.
    expect(body.events[1]).toEqual(expect.objectContaining({ suppressed: true }));
    expect(body.events[1]).not.toHaveProperty("notificationId");
    expect(body.events[3]).not.toHaveProperty("transactionSignature");
    expect(body.events[3].notificationId).toBe(expected[3]!.notificationId);
  });

  it("pages with limit and offset and says whether more follow", async () => {
    const middle = (await get(`/v1/risk/alerts/${alertId}/events?limit=2&offset=2`)).json();
    expect(middle.events.map((e: { eventId: string }) => e.eventId)).toEqual(expected.slice(2, 4).map((e) => e.eventId));
    expect(middle).toMatchObject({ total: 5, hasMore: true });
    const last = (await get(`/v1/risk/alerts/${alertId}/events?limit=2&offset=4`)).json();
    expect(last).toMatchObject({ total: 5, hasMore: false });
    expect(last.events).toHaveLength(1);
    expect((await get(`/v1/risk/alerts/${alertId}/events?offset=10`)).json()).toEqual({ events: [], total: 5, hasMore: false });
  });

  it("pages on from an event with after, to the end of the list, whatever offset can reach", async () => {
    const ids = (page: { events: Array<{ eventId: string }> }) => page.events.map((e) => e.eventId);
    const first = (await get(`/v1/risk/alerts/${alertId}/events?limit=2`)).json();
    const second = (await get(`/v1/risk/alerts/${alertId}/events?limit=2&after=${first.events[1].eventId}`)).json();
    expect(second).toMatchObject({ total: 5, hasMore: true });
    const third = (await get(`/v1/risk/alerts/${alertId}/events?limit=2&after=${second.events[1].eventId}`)).json();
    expect(third).toMatchObject({ total: 5, hasMore: false });
    expect([...ids(first), ...ids(second), ...ids(third)]).toEqual(expected.map((e) => e.eventId));
    // offset counts from the cursor.
    expect(ids((await get(`/v1/risk/alerts/${alertId}/events?limit=1&offset=1&after=${expected[0]!.eventId}`)).json())).toEqual([expected[2]!.eventId]);
  });

  it("pages past events of the same instant in the list's order", async () => {
    const walletId = (await insertWallet(t, "alice")).walletId;
    const sameInstant = (await webhookAlert(walletId)).alertId;
    const at = new Date("2026-03-02T08:00:00.000Z");
    for (let i = 0; i < 4; i++) await insertEvent(t, sameInstant, { createdAt: at });
    const all = (await get(`/v1/risk/alerts/${sameInstant}/events`)).json().events.map((e: { eventId: string }) => e.eventId);
    const walked: string[] = [];
    let after = "";
    for (let page = 0; page < 4; page++) {
      const body = (await get(`/v1/risk/alerts/${sameInstant}/events?limit=1${after}`)).json();
      walked.push(body.events[0].eventId);
      after = `&after=${body.events[0].eventId}`;
      expect(body.hasMore).toBe(page < 3);
    }
    expect(walked).toEqual(all);
  });

  it("refuses an after that is no event of this alert with 400", async () => {
    const other = (await webhookAlert((await insertWallet(t, "alice")).walletId)).alertId;
    const foreign = await insertEvent(t, other, { createdAt: new Date("2026-03-01T12:00:00.000Z") });
    for (const after of [foreign.eventId, "evt_nope"]) {
      expect(fieldErrors(await get(`/v1/risk/alerts/${alertId}/events?after=${after}`))).toEqual([
        `query.after must be the eventId of an event of alert ${alertId}`,
      ]);
    }
  });

  it("says how to page on past offset's bound", async () => {
    expect(fieldErrors(await get(`/v1/risk/alerts/${alertId}/events?offset=100001`))).toEqual([
      "query.offset must be a whole number from 0 to 100000; to read further, set after to the eventId of the last event received (offset then counts from there)",
    ]);
  });

  it.each([
    ["limit=0", "query.limit must be a whole number from 1 to 500"],
    ["limit=501", "query.limit must be a whole number from 1 to 500"],
    ["offset=-1", "query.offset must be a whole number from 0 to 100000"],
  ])("refuses %s with 400", async (query, error) => {
    expect(fieldErrors(await get(`/v1/risk/alerts/${alertId}/events?${query}`))).toEqual([error]);
  });

  it("answers 404 for an unknown alert", async () => {
    problem(await get("/v1/risk/alerts/alr_00000000000000000000000000/events"), 404, "not_found");
  });
});

describe("another caller's alert", () => {
  let alertId: string;
  beforeAll(async () => {
    alertId = (await webhookAlert((await insertWallet(t, "alice")).walletId)).alertId;
  });

  it("is a 404, never a 403, for GET, PATCH, DELETE and events, and stays untouched", async () => {
    for (const res of [
      await get(`/v1/risk/alerts/${alertId}`, bob),
      await patch(alertId, { status: "paused" }, bob),
      await remove(alertId, bob),
      await get(`/v1/risk/alerts/${alertId}/events`, bob),
    ]) {
      expect(problem(res, 404, "not_found").detail).toBe(`alert ${alertId} was not found`);
    }
    expect((await get(`/v1/risk/alerts/${alertId}`)).json().status).toBe("active");
    expect((await get("/v1/risk/alerts", bob)).json().total).toBe(0);
  });

  it("is a 404 even for a token with the admin scope", async () => {
    const admin = await t.token("bob", `${ALL_SCOPES} admin`);
    problem(await get(`/v1/risk/alerts/${alertId}`, admin), 404, "not_found");
  });

  it("needs alerts:write to change an alert, alerts:read being enough to read it", async () => {
    const reader = await t.token("alice", "alerts:read");
    expect((await get(`/v1/risk/alerts/${alertId}`, reader)).statusCode).toBe(200);
    problem(await patch(alertId, { status: "paused" }, reader), 403, "forbidden");
    problem(await remove(alertId, reader), 403, "forbidden");
  });
});
