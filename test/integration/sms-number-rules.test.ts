// Which numbers SMS alerts text (domain/sms-number.ts), through the real API and the real
// delivery worker with the Twilio stand-in: premium-rate, satellite and too-short numbers, and
// numbers outside SMS_ALLOWED_COUNTRIES, are refused with a 400 naming the field and the reason
// when an alert is created or changed, and again before each send, so an alert stored before
// the rules (or before the allowlist narrowed) texts no one it may not.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { auth, fieldErrors, insertWallet, problem } from "../helpers/alert-fixtures.ts";
import { failingFor } from "../helpers/failure-run.ts";
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
import { startTwilioStandin, twilioSettings, type TwilioStandin } from "../helpers/twilio-standin.ts";

let standin: TwilioStandin;
let t: TestApp;
let workers: DeliveryWorkers;
let token: string;
let walletId: string;

beforeAll(async () => {
  standin = await startTwilioStandin();
  t = await startTestApp("sms-number-rules", {
    ...twilioSettings(standin.baseUrl),
    SMS_ALLOWED_COUNTRIES: "US,CA",
    RETRY_SCHEDULE: "300ms,300ms,300ms",
  });
  workers = startDeliveryWorkers(t, { smsTimeoutMs: 5_000 });
  token = await t.token("alice");
  ({ walletId } = await insertWallet(t, "alice"));
});
afterAll(async () => {
  await workers?.close();
  await standin?.close();
  await t?.close();
});

const createSms = (recipient: string | undefined, bearer = token) =>
  t.app.inject({
    method: "POST",
    url: "/v1/risk/alerts",
    headers: auth(bearer),
    payload: { walletId, condition: "large_transfer", threshold: 1, notificationMethod: "sms", ...(recipient === undefined ? {} : { recipient }) },
  });
const sentTo = (to: string) => standin.messages().filter((message) => message.to === to);

describe("creating and changing an SMS alert", () => {
  it("answers 201 for a valid number of an allowed country", async () => {
    const res = await createSms("+14155552671");
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().recipient).toBe("+14155552671");
  });

  it("answers 400 for a premium-rate number, naming the field and the reason", async () => {
    const body = problem(await createSms("+19005551234"), 400, "validation_failed");
    const reason = "is a premium-rate number, which SMS alerts do not text: its holder can be paid for each message, at the operator's cost";
    expect(body.errors).toEqual([{ path: "body.recipient", message: reason }]);
    expect(body.detail).toBe(`recipient ${reason}`);
  });

  it.each([
    ["+881234567", "body.recipient is too short for a phone number with country code +881"],
    ["+12345", "body.recipient is too short for a phone number with country code +1"],
    ["+8816123456789", expect.stringMatching(/^body\.recipient is a global service number \(\+881: satellite phones/)],
    ["+447400123456", "body.recipient is a number of GB, and this service texts numbers of US, CA only (SMS_ALLOWED_COUNTRIES)"],
  ])("answers 400 for %s, which the reviewer's requests got a 201 for (or another country's)", async (recipient, error) => {
    expect(fieldErrors(await createSms(recipient))).toEqual([error]);
  });

  it("holds the token's phone_number claim to the same rules", async () => {
    const premium = await t.token("alice", undefined, { phone: "+19005551234" });
    expect(fieldErrors(await createSms(undefined, premium))).toEqual([
      expect.stringMatching(/^body\.recipient is required: the token's phone_number claim is a premium-rate number/),
    ]);
  });

  it("checks a PATCHed recipient too, and stores a valid one", async () => {
    const alertId = (await createSms("+16135550142")).json().alertId as string;
    const patch = (recipient: string) =>
      t.app.inject({ method: "PATCH", url: `/v1/risk/alerts/${alertId}`, headers: auth(token), payload: { recipient } });
    expect(fieldErrors(await patch("+19005551234"))).toEqual([expect.stringMatching(/^body\.recipient is a premium-rate number/)]);
    expect((await alertRow(t, alertId)).recipient).toBe("+16135550142");
    const mended = await patch("+12125550142");
    expect(mended.statusCode, mended.body).toBe(200);
    expect((await alertRow(t, alertId)).recipient).toBe("+12125550142");
  });
});

// Alerts stored before the rules, or before SMS_ALLOWED_COUNTRIES left their country out.
describe("delivering to a number the rules now refuse", () => {
  it("fails the notification at once without asking Twilio, says why, and counts it against the alert", async () => {
    const to = "+447400123456";
    const alert = await seedAlert(t, { method: "sms", recipient: to });
    const id = await seedNotification(t, alert, "sms", to);

    const row = await waitForNotification(t, id, isFinished);
    expect(row.status).toBe("failed");
    const attempts = await attemptsOf(t, id);
    expect(attempts.map((attempt) => attempt.error)).toEqual([
      "not sent: +447400123456 is a number of GB, and this service texts numbers of US, CA only (SMS_ALLOWED_COUNTRIES)",
    ]);
    expect(sentTo(to)).toEqual([]);
    // The owner's to mend (PATCH recipient), as an SSRF refusal of a webhook URL is: a failure run starts.
    expect((await alertRow(t, alert.alertId)).failingSince).not.toBeNull();
  });

  it("refuses a premium-rate number stored before the rules, and disables an alert a day into its failures", async () => {
    const to = "+19005551234";
    const alert = await seedAlert(t, { method: "sms", recipient: to });
    await failingFor(t, alert.alertId);
    const id = await seedNotification(t, alert, "sms", to);

    expect((await waitForNotification(t, id, isFinished)).status).toBe("failed");
    expect((await attemptsOf(t, id))[0]!.error).toMatch(/^not sent: \+19005551234 is a premium-rate number/);
    expect(sentTo(to)).toEqual([]);
    expect((await alertRow(t, alert.alertId)).status).toBe("disabled");
  });

  it("still sends to a number of an allowed country through Twilio", async () => {
    const to = "+12125550199";
    const alert = await seedAlert(t, { method: "sms", recipient: to });
    const id = await seedNotification(t, alert, "sms", to);

    expect((await waitForNotification(t, id, isFinished)).status).toBe("delivered");
    expect(sentTo(to)).toHaveLength(1);
  });
});
