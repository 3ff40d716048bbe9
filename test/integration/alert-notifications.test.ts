// GET /v1/risk/alerts/{id}/notifications (routes/alert-notifications.ts): an alert's
// notifications, firings, tests and cooldown digests alike, oldest first in the order they were
// committed, with a cursor a poller resumes from; the type of each (also on GET
// /v1/notifications/{id}); and, on the events list, the digest that tells of a suppressed event.
// The real pipeline, delivery workers and a webhook receiver; the app's clock is injected and
// moved on through cooldowns.
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findTestTarget, insertNotification } from "../../src/db/queries/notifications.ts";
import type { NotificationPayload } from "../../src/domain/types.ts";
import { newId } from "../../src/ids.ts";
import { settleDigestPayload } from "../../src/pipeline/cooldown-digest.ts";
import type { RunningWorkers } from "../../src/queue/run-workers.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { randomAddress } from "../helpers/chain.ts";
import { samplePayload } from "../helpers/delivery.ts";
import { holdTransaction, waitForALockWait } from "../helpers/held-transaction.ts";
import { settled, startWorkers, track, tx, waitFor } from "../helpers/pipeline.ts";
import { bearer, errorPaths, ingestTransactions } from "../helpers/seed.ts";
import { startWebhookReceiver, type Route, type WebhookReceiver } from "../helpers/webhook-receiver.ts";

let t: TestApp;
let workers: RunningWorkers;
let receiver: WebhookReceiver;
let alice: string;
let bob: string;
let offsetMs = 0;
let blockTime = Math.floor(Date.now() / 1000);
let routes = 0;

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  t = await startTestApp("alert-notifications", {}, { now: () => new Date(Date.now() + offsetMs) });
  workers = startWorkers(t, ["transactions", "risk", "deliver-webhook"]);
  alice = await t.token("alice");
  bob = await t.token("bob");
});
afterAll(async () => {
  await workers?.close();
  await t?.close();
  await receiver?.close();
});

type Summary = {
  notificationId: string;
  alertId: string;
  eventId: string | null;
  type: NotificationPayload["type"];
  channel: string;
  status: string;
  createdAt: string;
  deliveredAt: string | null;
  attemptCount: number;
  nextAttemptAt: string | null;
  carrier: unknown;
};
type Listed = { notifications: Summary[]; hasMore: boolean };
type Event = { eventId: string; suppressed: boolean; notificationId?: string; digestNotificationId: string | null };

async function list(alertId: string, query = "", token = alice): Promise<Listed> {
  const res = await t.app.inject({ url: `/v1/risk/alerts/${alertId}/notifications${query}`, headers: bearer(token) });
  expect(res.statusCode, res.body).toBe(200);
  return res.json<Listed>();
}

const idsOf = (page: Listed) => page.notifications.map((n) => n.notificationId);

async function eventsOf(alertId: string): Promise<Event[]> {
  const res = await t.app.inject({ url: `/v1/risk/alerts/${alertId}/events`, headers: bearer(alice) });
  expect(res.statusCode, res.body).toBe(200);
  return res.json<{ events: Event[] }>().events;
}

async function alertOn(walletId: string, body: Record<string, unknown>): Promise<{ alertId: string; webhookSecret?: string }> {
  const res = await t.app.inject({ method: "POST", url: "/v1/risk/alerts", headers: bearer(alice), payload: { walletId, condition: "large_transfer", threshold: 100, token: "SOL", ...body } });
  if (res.statusCode !== 201) throw new Error(`POST /v1/risk/alerts answered ${res.statusCode}: ${res.body}`);
  return res.json();
}

async function webhookAlert(cooldownSeconds: number): Promise<{ alertId: string; address: string; route: Route }> {
  const wallet = await track(t, alice, randomAddress(), "Desk");
  const route = receiver.route(`/listed-${++routes}`);
  const { alertId } = await alertOn(wallet.walletId, { notificationMethod: "webhook", webhookUrl: route.url, cooldownSeconds });
  return { alertId, address: wallet.address, route };
}

/** A transfer of `amount` SOL out of `from`, evaluated before it returns. */
async function send(from: string, amount: number) {
  await ingestTransactions(t, alice, [tx({ from, to: randomAddress(), amount, token: "SOL", blockTime: blockTime++ })]);
  await settled(t);
}

async function patchCooldown(alertId: string, cooldownSeconds: number) {
  const res = await t.app.inject({ method: "PATCH", url: `/v1/risk/alerts/${alertId}`, headers: bearer(alice), payload: { cooldownSeconds } });
  expect(res.statusCode, res.body).toBe(200);
}

/** The events a digest tells of, as its first attempt builds them (and stores them, for every retry). */
async function toldBy(digestId: string): Promise<string[]> {
  const [row] = await t.deps.sql<{ payload: NotificationPayload }[]>`select payload from notifications where id = ${digestId}`;
  const built = await settleDigestPayload(t.deps.sql, digestId, row!.payload, t.deps.now());
  return built!.data.suppressed!.eventIds;
}

/** A notification written as the test route writes one, committed in its own transaction. */
async function insertOne(alertId: string, id = newId("ntf")): Promise<string> {
  await insertNotification(t.deps.sql, {
    id,
    alertId,
    eventId: null,
    channel: "webhook",
    destination: "http://127.0.0.1:9/hook",
    payload: samplePayload({ alertId, walletId: "wal_sample", address: randomAddress() }, "risk_alert.test"),
    createdAt: new Date(),
  });
  return id;
}

describe("GET /v1/risk/alerts/{id}/notifications", () => {
  it("lists a firing, the cooldown digest of what it held back and a test, oldest first, each with its type, as GET /v1/notifications/{id} shows it", async () => {
    // A cooldown far longer than the test: its digest stays pending throughout.
    const { alertId, address, route } = await webhookAlert(300);
    await send(address, 150);
    await waitFor("the 150 SOL webhook", async () => route.requests.length === 1);
    offsetMs += 2_500;
    await send(address, 1_000_000);
    offsetMs += 2_500;
    await send(address, 250_000);
    const tested = await t.app.inject({ method: "POST", url: `/v1/risk/alerts/${alertId}/test`, headers: bearer(alice) });
    expect(tested.statusCode).toBe(202);
    const testId = tested.json<{ notificationId: string }>().notificationId;
    await waitFor("the test webhook", async () => route.requests.length === 2);

    const page = await list(alertId);
    expect(page.hasMore).toBe(false);
    const [fired, digest, test] = page.notifications;
    expect(page.notifications.map((n) => n.type)).toEqual(["risk_alert.triggered", "risk_alert.suppressed", "risk_alert.test"]);
    expect(test!.notificationId).toBe(testId);
    // What the receiver got, under the same ids; the digest waits for the cooldown's end.
    expect(route.requests.map((request) => request.headers["webhook-id"])).toEqual([fired!.notificationId, testId]);
    expect(fired).toMatchObject({ alertId, eventId: expect.stringMatching(/^evt_/), channel: "webhook", attemptCount: 1, nextAttemptAt: null, carrier: null });
    expect(digest).toMatchObject({ eventId: null, status: "pending", attemptCount: 0, deliveredAt: null });
    expect(Date.parse(digest!.nextAttemptAt!)).toBe(Date.parse(fired!.createdAt) + 300_000);
    await waitFor("the firing and the test recorded delivered", async () => {
      const delivered = await list(alertId, "?status=delivered");
      return delivered.notifications.length === 2 && delivered;
    });

    // Each item is GET /v1/notifications/{id} without the attempts; there, too, the type tells a test from a digest.
    for (const item of (await list(alertId)).notifications) {
      const one = await t.app.inject({ url: `/v1/notifications/${item.notificationId}`, headers: bearer(alice) });
      expect(one.json()).toEqual({ ...item, attempts: expect.any(Array) });
      expect(one.json<{ attempts: unknown[] }>().attempts).toHaveLength(item.attemptCount);
    }

    // The events list names the digest on both events the cooldown held back.
    const events = await eventsOf(alertId);
    expect(events.map((e) => [e.suppressed, e.notificationId ?? null, e.digestNotificationId])).toEqual([
      [true, null, digest!.notificationId],
      [true, null, digest!.notificationId],
      [false, fired!.notificationId, null],
    ]);
  });

  it("filters by status and type within the same order, from a cursor the filters leave out", async () => {
    const { alertId, address, route } = await webhookAlert(300);
    await send(address, 150);
    await waitFor("the 150 SOL webhook", async () => route.requests.length === 1);
    offsetMs += 2_500;
    await send(address, 500);
    route.respond({ status: 400, body: "misconfigured" }); // the test is refused for good: failed
    const tested = await t.app.inject({ method: "POST", url: `/v1/risk/alerts/${alertId}/test`, headers: bearer(alice) });
    const testId = tested.json<{ notificationId: string }>().notificationId;
    await waitFor("the test to fail", async () => (await list(alertId, "?status=failed")).notifications.length === 1);
    const [fired, digest] = (await list(alertId)).notifications;
    await waitFor("the firing delivered", async () => (await list(alertId, "?status=delivered")).notifications.length === 1);

    expect(idsOf(await list(alertId, "?status=delivered"))).toEqual([fired!.notificationId]);
    expect(idsOf(await list(alertId, "?status=pending"))).toEqual([digest!.notificationId]);
    expect(idsOf(await list(alertId, "?status=failed"))).toEqual([testId]);
    expect(idsOf(await list(alertId, "?status=retrying"))).toEqual([]);
    expect(idsOf(await list(alertId, "?type=risk_alert.suppressed"))).toEqual([digest!.notificationId]);
    expect(idsOf(await list(alertId, "?type=risk_alert.test&status=failed"))).toEqual([testId]);
    expect(idsOf(await list(alertId, "?type=risk_alert.triggered&status=failed"))).toEqual([]);
    expect(idsOf(await list(alertId, `?type=risk_alert.test&after=${fired!.notificationId}`))).toEqual([testId]);
    expect(idsOf(await list(alertId, `?type=risk_alert.triggered&after=${fired!.notificationId}`))).toEqual([]);
  });

  it("resumes from the last notification received, missing none and repeating none while new ones are committed, one of them with an older id", async () => {
    const { alertId } = await webhookAlert(0);
    const committed: string[] = [];
    for (let i = 0; i < 5; i += 1) committed.push(await insertOne(alertId));

    const received: string[] = [];
    let after = "";
    let page = await list(alertId, "?limit=2");
    for (let round = 0; ; round += 1) {
      received.push(...idsOf(page));
      after = page.notifications.at(-1)?.notificationId ?? after;
      // Between pages: a new one, and once one whose id was stamped a minute before the rest (an
      // evaluation that read its clock, then waited for another's lock): by id it sorts first.
      if (round < 3) committed.push(await insertOne(alertId, round === 1 ? newId("ntf", Date.now() - 60_000) : undefined));
      if (!page.hasMore && round >= 3) break;
      page = await list(alertId, `?limit=2&after=${after}`);
    }
    expect(received).toEqual(committed);
    expect([...committed].sort()[0]).toBe(committed[6]); // the late one: first by id, listed where it was committed

    // A poller at the end: nothing new, then exactly what is committed next.
    expect(await list(alertId, `?after=${after}`)).toEqual({ notifications: [], hasMore: false });
    const next = await insertOne(alertId);
    expect(idsOf(await list(alertId, `?after=${after}`))).toEqual([next]);
  });

  it("holds a notification back while another of its alert is being committed, so a poller cannot pass over the first", async () => {
    const { alertId } = await webhookAlert(0);
    const before = await list(alertId);
    const session = postgres(t.config.databaseUrl, { max: 1, onnotice: () => {} });
    let release: (() => Promise<void>) | undefined;
    try {
      // As the test route writes one: the alert held FOR KEY SHARE, the notification inserted; not committed yet.
      // Its id is stamped an hour ahead: by id it would be listed after the next one, by commit it is before.
      const early = newId("ntf", Date.now() + 3_600_000);
      release = await holdTransaction(session, async (held) => {
        await findTestTarget(held, "alice", alertId);
        await insertNotification(held, { id: early, alertId, eventId: null, channel: "webhook", destination: "http://127.0.0.1:9/hook", payload: samplePayload({ alertId, walletId: "wal_sample", address: randomAddress() }, "risk_alert.test"), createdAt: new Date() });
      });
      const tested = t.app.inject({ method: "POST", url: `/v1/risk/alerts/${alertId}/test`, headers: bearer(alice) });
      await waitForALockWait(t.deps.sql, "the test notification to wait for the open one");
      // The poller sees neither yet: the second is not committed ahead of the first.
      expect(await list(alertId)).toEqual(before);
      await release();
      const second = (await tested).json<{ notificationId: string }>().notificationId;
      expect(second < early).toBe(true);
      expect(idsOf(await list(alertId))).toEqual([early, second]);
    } finally {
      await release?.();
      await session.end();
    }
  });

  it("is the owner's only: another caller's alert is a 404, cursor or not", async () => {
    const { alertId } = await webhookAlert(0);
    const one = await insertOne(alertId);
    for (const query of ["", `?after=${one}`]) {
      const res = await t.app.inject({ url: `/v1/risk/alerts/${alertId}/notifications${query}`, headers: bearer(bob) });
      expect(res.statusCode).toBe(404);
      expect(res.json()).toMatchObject({ code: "not_found" });
    }
    expect((await t.app.inject({ url: "/v1/risk/alerts/alr_unknown/notifications", headers: bearer(alice) })).statusCode).toBe(404);
  });

  it("refuses a cursor that is no notification of the alert, and a limit, status or type it does not know", async () => {
    const { alertId } = await webhookAlert(0);
    const other = await webhookAlert(0);
    const elsewhere = await insertOne(other.alertId);
    for (const [query, path] of [
      ["?after=ntf_unknown", "query.after"],
      [`?after=${elsewhere}`, "query.after"],
      ["?limit=0", "query.limit"],
      ["?limit=501", "query.limit"],
      ["?status=sent", "query.status"],
      ["?type=risk_alert.disabled", "query.type"],
      ["?offset=10", "query.offset"],
    ] as const) {
      const res = await t.app.inject({ url: `/v1/risk/alerts/${alertId}/notifications${query}`, headers: bearer(alice) });
      expect(res.statusCode, query).toBe(400);
      expect(errorPaths(res.json()), query).toEqual([path]);
    }
    const refused = await t.app.inject({ url: `/v1/risk/alerts/${alertId}/notifications?after=${elsewhere}`, headers: bearer(alice) });
    expect(refused.json<{ errors: Array<{ message: string }> }>().errors[0]!.message).toBe(`must be the notificationId of a notification of alert ${alertId}`);
  });
});

describe("digestNotificationId on the events list", () => {
  it("names, for each suppressed event, the digest that tells of it when a cooldown was lengthened mid-window", async () => {
    const { alertId, address } = await webhookAlert(20);
    await send(address, 150);
    offsetMs += 2_500;
    await send(address, 500); // held back in the 20 s window
    await patchCooldown(alertId, 60);
    offsetMs += 2_500;
    await send(address, 600); // within the first window's end still, and with a window end of its own
    offsetMs += 20_000;
    await send(address, 700); // past the first window's end: the lengthened window's alone
    const digests = (await list(alertId, "?type=risk_alert.suppressed")).notifications.map((n) => n.notificationId);
    expect(digests).toHaveLength(2);

    const events = (await eventsOf(alertId)).reverse(); // oldest first
    const suppressed = events.filter((e) => e.suppressed);
    expect(suppressed).toHaveLength(3);
    for (const digest of digests) {
      const told = await toldBy(digest);
      expect(told.length).toBeGreaterThan(0);
      expect(suppressed.filter((e) => e.digestNotificationId === digest).map((e) => e.eventId)).toEqual(told);
    }
    expect(suppressed.map((e) => digests.indexOf(e.digestNotificationId!))).toEqual([0, 0, 1]);
    expect(events[0]!.digestNotificationId).toBeNull();
  });

  it("names the later window's digest once a shortened cooldown let a notification out, and none where no digest could be made", async () => {
    const { alertId, address } = await webhookAlert(60);
    await send(address, 150);
    offsetMs += 2_500;
    await send(address, 500); // held back: the first window's
    await patchCooldown(alertId, 50);
    offsetMs += 50_000;
    await send(address, 600); // 52.5 s after the first: sent, and starts a window of 50 s
    offsetMs += 2_500;
    await send(address, 700); // held back: the second window's, though within the first's 60 s
    const digests = (await list(alertId, "?type=risk_alert.suppressed")).notifications.map((n) => n.notificationId);
    expect(digests).toHaveLength(2);
    const events = (await eventsOf(alertId)).reverse();
    expect(events.map((e) => [e.suppressed, e.digestNotificationId])).toEqual([
      [false, null],
      [true, digests[0]],
      [false, null],
      [true, digests[1]],
    ]);
    expect(await toldBy(digests[0]!)).toEqual([events[1]!.eventId]);
    expect(await toldBy(digests[1]!)).toEqual([events[3]!.eventId]);

    // An email alert whose recipient an operator took away after its first notification: its
    // cooldown holds the next firing back, and there is nowhere to send a digest.
    const wallet = await track(t, alice);
    const { alertId: mailAlertId } = await alertOn(wallet.walletId, { notificationMethod: "email", recipient: "desk@example.com", cooldownSeconds: 60 });
    await send(wallet.address, 150);
    await t.deps.sql`update alerts set recipient = null where id = ${mailAlertId}`;
    offsetMs += 2_500;
    await send(wallet.address, 500);
    const mailEvents = await eventsOf(mailAlertId);
    expect(mailEvents.map((e) => [e.suppressed, e.digestNotificationId])).toEqual([
      [true, null],
      [false, null],
    ]);
    expect((await list(mailAlertId)).notifications.map((n) => n.type)).toEqual(["risk_alert.triggered"]);
  });
});
