// What the carrier did with an SMS, through Twilio's status callbacks: real workers send through
// the SDK to the Twilio stand-in (Prism on Twilio's own description), which posts signed,
// form-encoded callbacks to the API listening on loopback at TWILIO_STATUS_CALLBACK_URL; the
// verdict is read back through GET /v1/notifications/{id}.
import { randomBytes } from "node:crypto";
import twilio from "twilio";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createChannels } from "../../src/notify/channels/index.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import {
  alertRow,
  attemptsOf,
  isFinished,
  samplePayload,
  seedAlert,
  seedNotification,
  waitForNotification,
} from "../helpers/delivery.ts";
import { startLoggedApp } from "../helpers/logged-app.ts";
import { CALLBACK_ROUTE, TWILIO_ENV, startCallbackApp, type CallbackApp, type Carrier } from "../helpers/carrier-callbacks.ts";
import { TEST_TWILIO, type CarrierReport, type TwilioStandin } from "../helpers/twilio-standin.ts";
import { waitFor } from "../helpers/wait.ts";

const ROUTE = CALLBACK_ROUTE;
const ADMIN = { user: "admin", password: "admin-password-of-the-test" };

let standin: TwilioStandin;
let t: TestApp;
let callbackUrl: string;
let app: CallbackApp | undefined;
let alice: string;

beforeAll(async () => {
  app = await startCallbackApp("sms-carrier-status", { ADMIN_USER: ADMIN.user, ADMIN_PASSWORD: ADMIN.password });
  ({ t, standin, callbackUrl } = app);
  alice = await t.token("alice");
});
afterAll(async () => {
  await app?.close();
});

type NotificationBody = { status: string; attempts: unknown[]; carrier: Carrier };

/** An SMS alert on `to` and one notification, sent by the workers until Twilio took it: its id and Twilio's sid. */
async function sendSms(to: string, reports?: readonly CarrierReport[]) {
  if (reports) standin.carrierReportsFor(to, reports);
  const alert = await seedAlert(t, { method: "sms", recipient: to });
  const id = await seedNotification(t, alert, "sms", to);
  const row = await waitForNotification(t, id, isFinished);
  expect(row.status).toBe("delivered");
  const message = standin.messages().find((m) => m.to === to);
  expect(message, `the stand-in got no message to ${to}`).toBeDefined();
  return { id, alert, sid: message!.sid, message: message! };
}

async function notification(id: string): Promise<NotificationBody> {
  const res = await t.app.inject({ url: `/v1/notifications/${id}`, headers: { authorization: `Bearer ${alice}` } });
  expect(res.statusCode).toBe(200);
  return res.json<NotificationBody>();
}

/** Waits until the stand-in has posted `count` callbacks for the message, and returns them. */
const callbacksOf = (sid: string, count: number) =>
  waitFor(`${count} status callbacks for ${sid}`, async () => {
    const posted = standin.callbacks().filter((c) => c.params.MessageSid === sid);
    return posted.length >= count && posted;
  });

/** The parameters Twilio posts for a message's status. */
const callbackParams = (sid: string, status: string, errorCode?: number): Record<string, string> => ({
  AccountSid: TEST_TWILIO.accountSid,
  ApiVersion: "2010-04-01",
  From: TEST_TWILIO.from,
  MessageSid: sid,
  MessageStatus: status,
  To: "+12125559999",
  ...(errorCode === undefined ? {} : { ErrorCode: String(errorCode) }),
});

const post = (params: Record<string, string>, signature?: string | null) => standin.postStatusCallback(callbackUrl, params, { signature });

const newSid = () => `SM${randomBytes(16).toString("hex")}`;

async function verdictCount(status: string): Promise<number> {
  const auth = `Basic ${Buffer.from(`${ADMIN.user}:${ADMIN.password}`).toString("base64")}`;
  const res = await t.app.inject({ url: "/metrics", headers: { authorization: auth } });
  expect(res.statusCode).toBe(200);
  const line = res.body.split("\n").find((l) => l.startsWith(`wallet_alerts_sms_carrier_verdicts_total{status="${status}"}`));
  return Number(line?.split(" ").at(-1) ?? Number.NaN);
}

describe("SMS carrier status from Twilio's status callbacks", () => {
  it("asks Twilio for callbacks at the configured URL and shows the carrier's delivered on the notification", async () => {
    const { id, sid, message } = await sendSms("+12125550001");
    expect(message.statusCallback).toBe(callbackUrl);
    expect(await notification(id)).toMatchObject({ status: "delivered" });

    const posted = await callbacksOf(sid, 2);
    expect(posted.map((c) => [c.params.MessageStatus, c.answer])).toEqual([["sent", 204], ["delivered", 204]]);
    const body = await notification(id);
    expect(body.carrier).toEqual({ status: "delivered", errorCode: null, updatedAt: expect.stringMatching(/Z$/) });
  });

  it("shows undelivered with Twilio's error code (30003 unreachable handset), keeps the notification delivered and neither resends nor counts it against the alert", async () => {
    const { id, alert, sid } = await sendSms("+12125550002", [{ status: "sent" }, { status: "undelivered", errorCode: 30003 }]);
    await callbacksOf(sid, 2);

    const body = await notification(id);
    expect(body.status).toBe("delivered");
    expect(body.carrier).toMatchObject({ status: "undelivered", errorCode: 30003 });
    expect(await attemptsOf(t, id)).toHaveLength(1);
    const row = await alertRow(t, alert.alertId);
    expect(row.status).toBe("active");
    expect(row.failingSince).toBeNull();
  });

  it("counts each recorded verdict on /metrics by status", async () => {
    const before = await verdictCount("undelivered");
    expect(before).toBeGreaterThanOrEqual(0);
    const { sid } = await sendSms("+12125550003", [{ status: "sent" }, { status: "undelivered", errorCode: 30007 }]);
    await callbacksOf(sid, 2);
    expect(await verdictCount("undelivered")).toBe(before + 1);
  });

  it("refuses a callback with a missing, foreign or tampered X-Twilio-Signature (403 problem+json) and records nothing", async () => {
    const { id, sid } = await sendSms("+12125550004", []);
    const params = callbackParams(sid, "undelivered", 30005);

    const unsigned = await post(params, null);
    const foreign = await post(params, twilio.getExpectedTwilioSignature("another-account-token", callbackUrl, params));
    const tampered = await post(params, twilio.getExpectedTwilioSignature(TEST_TWILIO.authToken, callbackUrl, callbackParams(sid, "delivered")));
    for (const refused of [unsigned, foreign, tampered]) {
      expect(refused.status).toBe(403);
      expect(JSON.parse(refused.body)).toMatchObject({ status: 403, code: "forbidden" });
    }
    expect((await notification(id)).carrier).toBeNull();

    // The same callback, signed as Twilio signs it, is taken.
    expect((await post(params)).status).toBe(204);
    expect((await notification(id)).carrier).toMatchObject({ status: "undelivered", errorCode: 30005 });
  });

  it("keeps the first verdict when callbacks arrive out of order: a late sent, queued or second verdict does not replace it", async () => {
    const { id, sid } = await sendSms("+12125550005", []);
    for (const status of ["delivered", "sent", "queued", "undelivered"]) {
      expect((await post(callbackParams(sid, status, status === "undelivered" ? 30008 : undefined))).status, status).toBe(204);
    }
    expect((await notification(id)).carrier).toMatchObject({ status: "delivered", errorCode: null });
  });

  it("moves an intermediate status only forward, and takes the verdict after it", async () => {
    const { id, sid } = await sendSms("+12125550006", []);
    expect((await post(callbackParams(sid, "sent"))).status).toBe(204);
    expect((await post(callbackParams(sid, "queued"))).status).toBe(204);
    expect((await notification(id)).carrier).toMatchObject({ status: "sent" });
    expect((await post(callbackParams(sid, "failed", 30006))).status).toBe(204);
    expect((await notification(id)).carrier).toMatchObject({ status: "failed", errorCode: 30006 });
  });

  it("answers 204 to a signed callback for a message it does not know, and to a status it does not record", async () => {
    const unknown = await post(callbackParams(newSid(), "delivered"));
    expect(unknown).toEqual({ status: 204, body: "" });

    const { id, sid } = await sendSms("+12125550007", []);
    expect((await post(callbackParams(sid, "received"))).status).toBe(204);
    expect((await notification(id)).carrier).toBeNull();
  });

  it("refuses a body that is not Twilio's form (415) and a signed callback without a MessageSid (400)", async () => {
    const json = await t.app.inject({
      method: "POST",
      url: ROUTE,
      headers: { "content-type": "application/json", "x-twilio-signature": "c2ln" },
      payload: JSON.stringify({ MessageSid: newSid(), MessageStatus: "delivered" }),
    });
    expect(json.statusCode).toBe(415);
    expect(json.json()).toMatchObject({ code: "unsupported_media_type" });

    const withoutSid = await post({ MessageStatus: "delivered", AccountSid: TEST_TWILIO.accountSid });
    expect(withoutSid.status).toBe(400);
    expect(JSON.parse(withoutSid.body)).toMatchObject({ code: "validation_failed", errors: [{ path: "body.MessageSid", message: "is required" }] });
  });

  it("checks the signature against the configured URL, not the host and path the request names", async () => {
    const { id, sid } = await sendSms("+12125550008", []);
    const params = callbackParams(sid, "delivered");
    const form = new URLSearchParams(params).toString();
    const inject = (signedUrl: string) =>
      t.app.inject({
        method: "POST",
        url: ROUTE,
        headers: {
          host: "attacker.example",
          "content-type": "application/x-www-form-urlencoded",
          "x-twilio-signature": twilio.getExpectedTwilioSignature(TEST_TWILIO.authToken, signedUrl, params),
        },
        payload: form,
      });
    expect((await inject(`http://attacker.example${ROUTE}`)).statusCode).toBe(403);
    expect((await notification(id)).carrier).toBeNull();
    expect((await inject(callbackUrl)).statusCode).toBe(204);
    expect((await notification(id)).carrier).toMatchObject({ status: "delivered" });
  });
});

describe("SMS without TWILIO_STATUS_CALLBACK_URL", () => {
  let plain: TestApp;
  beforeAll(async () => {
    plain = await startTestApp("sms-carrier-status-off", { ...TWILIO_ENV, TWILIO_BASE_URL: standin.baseUrl });
  });
  afterAll(async () => {
    await plain?.close();
  });

  it("answers 404 on the callback route, even to a well-signed callback", async () => {
    const params = callbackParams(newSid(), "delivered");
    const res = await plain.app.inject({
      method: "POST",
      url: ROUTE,
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        "x-twilio-signature": twilio.getExpectedTwilioSignature(TEST_TWILIO.authToken, `http://localhost${ROUTE}`, params),
      },
      payload: new URLSearchParams(params).toString(),
    });
    expect(res.statusCode).toBe(404);
    expect(res.headers["content-type"]).toContain("application/problem+json");
    expect(res.json()).toMatchObject({ code: "not_found" });
  });

  it("asks Twilio for no status callback, and still keeps the message's sid", async () => {
    const channels = createChannels(plain.config, plain.deps.logger, { smsTimeoutMs: 5_000 });
    try {
      const to = "+12125550101";
      const alert = await seedAlert(plain, { method: "sms", recipient: to });
      const result = await channels.sms.send({ notificationId: "ntf_plain", destination: to, payload: samplePayload(alert), secrets: [], attemptAt: new Date() });
      const message = standin.messages().find((m) => m.to === to);
      expect(result.providerMessageId).toBe(message?.sid);
      expect(message?.statusCallback).toBeUndefined();
    } finally {
      await channels.close();
    }
  });
});

describe("the callback route's log", () => {
  it("never carries the auth token or the signature", async () => {
    const url = "https://alerts.example.com/v1/callbacks/twilio/sms-status";
    const logged = await startLoggedApp("sms-carrier-status-log", { ...TWILIO_ENV, TWILIO_STATUS_CALLBACK_URL: url }, "trace");
    try {
      const params = callbackParams(newSid(), "delivered");
      const good = twilio.getExpectedTwilioSignature(TEST_TWILIO.authToken, url, params);
      const bad = twilio.getExpectedTwilioSignature("another-account-token", url, params);
      for (const signature of [good, bad]) {
        const res = await logged.app.inject({
          method: "POST",
          url: ROUTE,
          headers: { "content-type": "application/x-www-form-urlencoded", "x-twilio-signature": signature },
          payload: new URLSearchParams(params).toString(),
        });
        expect(res.statusCode).toBe(signature === good ? 204 : 403);
      }
      const log = logged.lines.join("");
      expect(log).toContain(params.MessageSid); // the unknown message is logged, so the log was written
      for (const secret of [TEST_TWILIO.authToken, good, bad]) expect(log).not.toContain(secret);
    } finally {
      await logged.close();
    }
  });
});
