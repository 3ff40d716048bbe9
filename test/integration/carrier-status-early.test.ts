// Twilio status callbacks that come before the worker has recorded the attempt carrying their
// message's sid (a fast carrier, a slow batch): kept, and applied when the record comes. The
// real route on loopback, the real workers sending through the SDK to the Twilio stand-in, and
// the real attempt record; a test holds the record off with a table lock on delivery_attempts,
// so the callbacks come first for certain, then lets it go.
import { randomBytes } from "node:crypto";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EARLY_STATUS_TTL_MS } from "../../src/db/queries/carrier-status.ts";
import { createDeliveryStore } from "../../src/db/queries/deliveries.ts";
import type { TestApp } from "../helpers/app.ts";
import { startCallbackApp, type CallbackApp, type Carrier } from "../helpers/carrier-callbacks.ts";
import { attemptsOf, isFinished, seedAlert, seedNotification, waitForNotification } from "../helpers/delivery.ts";
import { TEST_TWILIO, type CarrierReport, type TwilioStandin } from "../helpers/twilio-standin.ts";
import { holdTransaction } from "../helpers/held-transaction.ts";
import { waitFor } from "../helpers/wait.ts";

let standin: TwilioStandin;
let t: TestApp;
let callbackUrl: string;
let app: CallbackApp | undefined;
let alice: string;
/** How far ahead of real time the app's clock runs: the expiry test moves it past the hour. */
let clockAheadMs = 0;

beforeAll(async () => {
  app = await startCallbackApp("carrier-status-early", {}, { now: () => new Date(Date.now() + clockAheadMs) });
  ({ t, standin, callbackUrl } = app);
  alice = await t.token("alice");
});
afterAll(async () => {
  await app?.close();
});

async function carrierOf(id: string): Promise<Carrier> {
  const res = await t.app.inject({ url: `/v1/notifications/${id}`, headers: { authorization: `Bearer ${alice}` } });
  expect(res.statusCode).toBe(200);
  return res.json<{ carrier: Carrier }>().carrier;
}

/**
 * The carrier once the worker has applied what was kept: that is its statement after the
 * record's (the notification shows `delivered` a moment before its carrier).
 */
async function settledCarrierOf(id: string): Promise<Carrier> {
  await waitForNotification(t, id, isFinished);
  return waitFor(`the carrier status of ${id}`, () => carrierOf(id)).catch(() => carrierOf(id));
}

/**
 * Holds off every attempt's record until the returned function is called: the worker's statement
 * inserts into delivery_attempts, and waits for this SHARE lock (reads of the table do not).
 */
async function holdAttemptRecords(): Promise<() => Promise<void>> {
  const blocker = postgres(t.config.databaseUrl, { max: 1, onnotice: () => {} });
  const release = await holdTransaction(blocker, (tx) => tx`lock table delivery_attempts in share mode`);
  return async () => {
    await release();
    await blocker.end();
  };
}

/** An SMS alert on `to` with one notification, enqueued for the workers; the stand-in's carrier reports `reports`. */
async function queueSms(to: string, reports: readonly CarrierReport[]) {
  standin.carrierReportsFor(to, reports);
  const alert = await seedAlert(t, { method: "sms", recipient: to });
  return seedNotification(t, alert, "sms", to);
}

/** The sid Twilio (the stand-in) gave the message to `to`, once it has taken it. */
const sidOf = (to: string) => waitFor(`a message to ${to}`, async () => standin.messages().find((m) => m.to === to)?.sid);

/** Waits until the stand-in has posted `count` status callbacks for the message; their answers. */
const callbacksAnswered = (sid: string, count: number) =>
  waitFor(`${count} status callbacks for ${sid}`, async () => {
    const posted = standin.callbacks().filter((c) => c.params.MessageSid === sid);
    return posted.length >= count && posted.map((c) => c.answer);
  });

const callbackParams = (sid: string, report: CarrierReport): Record<string, string> => ({
  AccountSid: TEST_TWILIO.accountSid,
  ApiVersion: "2010-04-01",
  From: TEST_TWILIO.from,
  MessageSid: sid,
  MessageStatus: report.status,
  To: "+13125559999",
  ...(report.errorCode === undefined ? {} : { ErrorCode: String(report.errorCode) }),
});

/** Posts one signed callback as Twilio does; every one is answered 204. */
async function post(sid: string, report: CarrierReport) {
  const answer = await standin.postStatusCallback(callbackUrl, callbackParams(sid, report));
  expect(answer.status, `${report.status} for ${sid}`).toBe(204);
}

async function keptSids(sids: readonly string[]): Promise<string[]> {
  const rows = await t.deps.sql<{ sid: string }[]>`
    select message_sid as sid from early_carrier_statuses where message_sid = any(${sids as string[]}::text[]) order by message_sid`;
  return rows.map((row) => row.sid);
}

const newSid = () => `SM${randomBytes(16).toString("hex")}`;

/** A pending SMS notification that no worker sends: a test records its attempt itself. */
async function unsentSms(to: string): Promise<{ id: string; alertId: string }> {
  const alert = await seedAlert(t, { method: "sms", recipient: to });
  return { id: await seedNotification(t, alert, "sms", to, { enqueue: false }), alertId: alert.alertId };
}

/** Records the attempt that Twilio took as `sid`, as the SMS worker does after Twilio's answer. */
const recordAccepted = (store: ReturnType<typeof createDeliveryStore>, sms: { id: string; alertId: string }, to: string, sid: string) =>
  store.record({
    notificationId: sms.id,
    alertId: sms.alertId,
    destination: to,
    at: new Date(),
    durationMs: 40,
    statusCode: 201,
    error: null,
    responseBody: null,
    status: "delivered",
    nextAttemptAt: null,
    providerMessageId: sid,
  });

describe("status callbacks that come before the attempt is recorded", () => {
  it("keeps the carrier's sent and delivered that came first, and shows delivered once the worker records the attempt", async () => {
    const to = "+13125550001";
    const release = await holdAttemptRecords();
    let id: string;
    let sid: string;
    try {
      id = await queueSms(to, [{ status: "sent" }, { status: "delivered" }]);
      sid = await sidOf(to);
      expect(await callbacksAnswered(sid, 2)).toEqual([204, 204]);
      // The race as a fast carrier runs it: both callbacks are in, the attempt is not.
      expect(await attemptsOf(t, id)).toHaveLength(0);
      expect(await carrierOf(id)).toBeNull();
    } finally {
      await release();
    }
    expect(await settledCarrierOf(id)).toEqual({ status: "delivered", errorCode: null, updatedAt: expect.stringMatching(/Z$/) });
    expect(await keptSids([sid])).toEqual([]);
  });

  it("applies several early callbacks of one message by the usual rules: delivered then sent stays delivered, a verdict keeps its error code", async () => {
    const cases = [
      { to: "+13125550002", reports: [{ status: "delivered" }, { status: "sent" }], carrier: { status: "delivered", errorCode: null } },
      {
        to: "+13125550003",
        reports: [{ status: "queued" }, { status: "sent" }, { status: "undelivered", errorCode: 30003 }, { status: "sent" }],
        carrier: { status: "undelivered", errorCode: 30003 },
      },
      { to: "+13125550004", reports: [{ status: "sent" }, { status: "queued" }], carrier: { status: "sent", errorCode: null } },
    ];
    const release = await holdAttemptRecords();
    const ids: string[] = [];
    try {
      for (const { to, reports } of cases) ids.push(await queueSms(to, reports));
      for (const [i, { to, reports }] of cases.entries()) {
        expect(await callbacksAnswered(await sidOf(to), reports.length)).toEqual(reports.map(() => 204));
        expect(await carrierOf(ids[i]!)).toBeNull();
      }
    } finally {
      await release();
    }
    for (const [i, { carrier }] of cases.entries()) expect(await settledCarrierOf(ids[i]!), cases[i]!.to).toMatchObject(carrier);
  });

  it("ends in the same carrier state whichever side of the attempt's record the callbacks land, the time being the callback's", async () => {
    const reports: CarrierReport[] = [{ status: "sent" }, { status: "failed", errorCode: 30006 }, { status: "sent" }, { status: "queued" }];
    // In order: the attempt is recorded, then the callbacks come.
    const inOrder = "+13125550005";
    const inOrderId = await queueSms(inOrder, []);
    await waitForNotification(t, inOrderId, isFinished);
    for (const report of reports) await post(await sidOf(inOrder), report);

    // Early: every callback comes while the record waits.
    const early = "+13125550006";
    const release = await holdAttemptRecords();
    let earlyId: string;
    let failedAt: number;
    try {
      earlyId = await queueSms(early, []);
      const sid = await sidOf(early);
      await post(sid, reports[0]!);
      failedAt = Date.now();
      for (const report of reports.slice(1)) await post(sid, report);
    } finally {
      await release();
    }

    const expected = { status: "failed", errorCode: 30006 };
    expect(await carrierOf(inOrderId)).toMatchObject(expected);
    const earlyCarrier = await settledCarrierOf(earlyId);
    expect(earlyCarrier).toMatchObject(expected);
    // When the failed callback came, not when the record applied it.
    expect(Math.abs(Date.parse(earlyCarrier!.updatedAt) - failedAt)).toBeLessThan(1_000);
  });

  it("loses no status when a callback and the attempt's record race each other", async () => {
    const store = createDeliveryStore(t.deps.sql);
    for (let round = 0; round < 5; round++) {
      const messages = await Promise.all(
        Array.from({ length: 12 }, async (_, i) => {
          const to = `+1646555${String(round).padStart(2, "0")}${String(i).padStart(2, "0")}`;
          return { to, sid: newSid(), sms: await unsentSms(to) };
        }),
      );
      // Staggered so that every interleaving happens: a callback kept before the record starts,
      // one that finds the sid, one that comes between the record's commit and its claim.
      const after = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
      await Promise.all(
        messages.flatMap(({ to, sid, sms }, i) => [
          after(i % 3).then(() => post(sid, { status: "delivered" })),
          after((i % 4) * 3).then(() => recordAccepted(store, sms, to, sid)),
        ]),
      );
      for (const { sms, sid } of messages) expect(await carrierOf(sms.id), `${sid} in round ${round}`).toMatchObject({ status: "delivered" });
      expect(await keptSids(messages.map((m) => m.sid))).toEqual([]);
    }
  });

  it("records an attempt as delivered, and reports rather than throws, when applying kept statuses fails after the record", async () => {
    const claimErrors: unknown[] = [];
    const store = createDeliveryStore(t.deps.sql, (error) => claimErrors.push(error));
    const sms = await unsentSms("+13125550009");
    // The claim's table gone for the moment: its statement fails after the record's has committed.
    await t.deps.sql`alter table early_carrier_statuses rename to early_carrier_statuses_away`;
    try {
      expect(await recordAccepted(store, sms, "+13125550009", newSid())).toBe(true);
    } finally {
      await t.deps.sql`alter table early_carrier_statuses_away rename to early_carrier_statuses`;
    }
    expect(claimErrors).toHaveLength(1);
    const [row] = await t.deps.sql<{ status: string }[]>`select status from notifications where id = ${sms.id}`;
    expect(row!.status).toBe("delivered");
  });

  it("keeps an early callback without waiting for an expired row that another session holds (two callbacks deleting each other's rows deadlocked)", async () => {
    const [held, arriving] = [newSid(), newSid()];
    const expired = new Date(Date.now() - EARLY_STATUS_TTL_MS - 60_000).toISOString();
    await t.deps.sql`
      insert into early_carrier_statuses (message_sid, status, received_at) values (${held}, 'sent', ${expired}::timestamptz)`;
    // Another callback's statement holding the expired row, as in the circle a deadlock needs.
    const release = await holdTransaction(t.deps.sql, (tx) => tx`select 1 from early_carrier_statuses where message_sid = ${held} for update`);
    try {
      await post(arriving, { status: "sent" });
      expect(await keptSids([arriving])).toEqual([arriving]);
    } finally {
      await release();
    }
    // Left for a later callback to delete: it skipped the row it would have waited for.
    expect(await keptSids([held])).toEqual([held]);
    await t.deps.sql`delete from early_carrier_statuses where message_sid = ${held}`;
  });

  it("forgets, after an hour, a callback of a sid that no attempt has claimed; a newer one is still applied", async () => {
    const [stale, fresh] = [newSid(), newSid()];
    await post(stale, { status: "delivered" });
    expect(await keptSids([stale])).toEqual([stale]);
    // An hour and a minute later by the app's clock, the next early callback deletes the stale row.
    clockAheadMs = EARLY_STATUS_TTL_MS + 60_000;
    try {
      await post(fresh, { status: "undelivered", errorCode: 30007 });
    } finally {
      clockAheadMs = 0;
    }
    expect(await keptSids([stale, fresh])).toEqual([fresh]);

    // Were the stale sid's attempt recorded after all, nothing would be left to apply.
    const store = createDeliveryStore(t.deps.sql);
    const staleSms = await unsentSms("+13125550007");
    const freshSms = await unsentSms("+13125550008");
    expect(await recordAccepted(store, staleSms, "+13125550007", stale)).toBe(true);
    expect(await recordAccepted(store, freshSms, "+13125550008", fresh)).toBe(true);
    expect(await carrierOf(staleSms.id)).toBeNull();
    expect(await carrierOf(freshSms.id)).toMatchObject({ status: "undelivered", errorCode: 30007 });
    expect(await keptSids([stale, fresh])).toEqual([]);
  });
});
