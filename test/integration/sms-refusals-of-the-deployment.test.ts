// Twilio answers that say nothing about the recipient: a refusal of the service's From number
// (21660: it belongs to another account), an answer that did not come from Twilio's API at all
// (a proxy at TWILIO_BASE_URL answering 404 or 407 with a page of its own), and a 2xx answer
// that cannot be read (the SMS may have gone). Retried on the schedule, never counted against
// the alert; none is recorded as the message refused before sending.
import { Writable } from "node:stream";
import { eq } from "drizzle-orm";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { alerts } from "../../src/db/schema.ts";
import { createLogger } from "../../src/logger.ts";
import { describeTwilioError } from "../../src/notify/channels/sms.ts";
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
import { startTwilioProxy, type TwilioProxy } from "../helpers/twilio-proxy.ts";
import { TEST_TWILIO, startTwilioStandin, twilioSettings, type TwilioStandin } from "../helpers/twilio-standin.ts";

let standin: TwilioStandin;
let proxy: TwilioProxy;
let t: TestApp;
let workers: DeliveryWorkers;
const lines: string[] = [];
let n = 0;

beforeAll(async () => {
  standin = await startTwilioStandin();
  proxy = await startTwilioProxy(standin.baseUrl);
  t = await startTestApp("sms-refusals-of-the-deployment", {
    // The operator's proxy in front of Twilio.
    ...twilioSettings(proxy.baseUrl),
    RETRY_SCHEDULE: "300ms,300ms,300ms",
  });
  // The worker's log, at warn and above, as an operator reads it.
  const logger = createLogger("warn", new Writable({ write: (chunk, _encoding, done) => (lines.push(String(chunk)), done()) }));
  workers = startDeliveryWorkers({ ...t, deps: { ...t.deps, logger } }, { smsTimeoutMs: 5_000 });
});
afterEach(() => {
  standin.acceptSender(TEST_TWILIO.from);
  proxy.behave({ mode: "pass" });
});
afterAll(async () => {
  await workers?.close();
  await proxy?.close();
  await standin?.close();
  await t?.close();
});

const number = () => `+1415555${String(4000 + ++n)}`;
const sentTo = (to: string) => standin.messages().filter((message) => message.to === to);
const logged = (notificationId: string) =>
  lines.map((line) => JSON.parse(line) as { level: number; msg: string; notificationId?: string; error?: string }).filter((entry) => entry.notificationId === notificationId);
/** An alert that has failed for a day already: one more counted failure disables it. */
async function failingAlert(to: string) {
  const alert = await seedAlert(t, { method: "sms", recipient: to });
  const since = new Date(Date.now() - 25 * 3_600_000);
  await t.deps.db.update(alerts).set({ failingSince: since }).where(eq(alerts.id, alert.alertId));
  return { alert, since };
}

describe("Twilio's refusals of the service's From number", () => {
  it("retries 21660 (the From number belongs to another account) as the deployment's, logs an error naming TWILIO_FROM, and delivers once the number is back", async () => {
    standin.refuseSender(TEST_TWILIO.from, {
      status: 400,
      code: 21660,
      message: `Mismatch between the 'From' number ${TEST_TWILIO.from} and the account ${TEST_TWILIO.accountSid}`,
    });
    const to = number();
    const { alert } = await failingAlert(to);
    const id = await seedNotification(t, alert, "sms", to);

    const refused = await waitForNotification(t, id, (row) => row.attemptCount >= 1);
    expect(refused.status).toBe("retrying");
    expect((await attemptsOf(t, id))[0]).toMatchObject({ statusCode: 400, error: expect.stringContaining("Twilio 21660: Mismatch") });
    expect((await alertRow(t, alert.alertId)).status).toBe("active");
    const [error] = logged(id).filter((entry) => entry.level === 50);
    expect(error!.msg).toContain("TWILIO_FROM");

    standin.acceptSender(TEST_TWILIO.from); // the number is moved back to this account
    expect((await waitForNotification(t, id, isFinished)).status).toBe("delivered");
    expect(sentTo(to)).toHaveLength(1);
    expect((await alertRow(t, alert.alertId)).status).toBe("active");

    // Twilio's other refusals of a From number this account cannot use.
    for (const code of [21601, 21616]) expect(describeTwilioError({ status: 400, code, message: "From" }).deploymentFault, String(code)).toBe("sender");
  });
});

describe("an answer from a proxy at TWILIO_BASE_URL, with no Twilio error code", () => {
  // 408: the proxy gave up waiting, the provider's trouble (warn); the others judged the way to Twilio (error, naming TWILIO_BASE_URL).
  it.each([
    [301, "<html><body><h1>301 Moved Permanently</h1></body></html>", true],
    [404, "<html><body><h1>404 Not Found</h1></body></html>", true],
    [407, "<html><body><h1>407 Proxy Authentication Required</h1></body></html>", true],
    [408, "<html><body><h1>408 Request Time-out</h1></body></html>", false],
  ])("never disables an alert for a proxy answering %i, even when the schedule runs out", async (status, page, namesTheSetting) => {
    proxy.behave({ mode: "answer", status, contentType: "text/html", body: page });
    const passed = proxy.counts().passed;
    const to = number();
    const { alert, since } = await failingAlert(to);
    const id = await seedNotification(t, alert, "sms", to);

    expect((await waitForNotification(t, id, isFinished)).status).toBe("failed");
    const attempts = await attemptsOf(t, id);
    expect(attempts.map((attempt) => attempt.statusCode)).toEqual([status, status, status, status]);
    if (namesTheSetting) expect(attempts[0]!.error).toContain("TWILIO_BASE_URL");
    const row = await alertRow(t, alert.alertId);
    expect(row.status).toBe("active");
    expect(row.failingSince).toEqual(since);
    // Nothing reached Twilio.
    expect(proxy.counts().passed).toBe(passed);
    expect(sentTo(to)).toHaveLength(0);
  });

  it("keeps retrying a proxy's 407, logging an error that names TWILIO_BASE_URL, and delivers once the proxy lets it through", async () => {
    proxy.behave({ mode: "answer", status: 407, contentType: "text/html", body: "<html>Proxy Authentication Required</html>" });
    const to = number();
    const alert = await seedAlert(t, { method: "sms", recipient: to });
    const id = await seedNotification(t, alert, "sms", to);

    const refused = await waitForNotification(t, id, (row) => row.attemptCount >= 1);
    expect(refused.status).toBe("retrying");
    expect((await alertRow(t, alert.alertId)).failingSince).toBeNull();
    const [error] = logged(id).filter((entry) => entry.level === 50);
    expect(error!.error).toContain("TWILIO_BASE_URL");

    proxy.behave({ mode: "pass" }); // the proxy's credentials in TWILIO_BASE_URL are mended
    expect((await waitForNotification(t, id, isFinished)).status).toBe("delivered");
    expect(sentTo(to)).toHaveLength(1);
    expect((await alertRow(t, alert.alertId)).failingSince).toBeNull();
  });
});

describe("a 2xx answer that is not Twilio's", () => {
  it("is not recorded as refused before sending: the SMS may have gone, so it is retried as the provider's trouble, logged at warn, and never counted", async () => {
    // Twilio takes the message; the proxy replaces its 201 with a page of its own.
    proxy.behave({ mode: "mangle", contentType: "text/html", body: "<html><body>OK</body></html>" });
    const to = number();
    const { alert, since } = await failingAlert(to);
    const id = await seedNotification(t, alert, "sms", to);

    const unconfirmed = await waitForNotification(t, id, (row) => row.attemptCount >= 1);
    expect(unconfirmed.status).toBe("retrying");
    const [first] = await attemptsOf(t, id);
    expect(first!.statusCode).toBeNull();
    expect(first!.error).toMatch(/^EUNCONFIRMED: HTTP 201 answered with a body that is not Twilio's \(text\/html, \d+ bytes\): the SMS may have been sent/);
    expect(first!.error).not.toContain("refused before sending");
    expect(sentTo(to).length).toBeGreaterThanOrEqual(1); // it did go
    const row = await alertRow(t, alert.alertId);
    expect(row.status).toBe("active");
    expect(row.failingSince).toEqual(since);
    expect(lines.some((line) => line.includes('"level":40') && line.includes(id) && line.includes("EUNCONFIRMED"))).toBe(true);

    proxy.behave({ mode: "pass" });
    expect((await waitForNotification(t, id, isFinished)).status).toBe("delivered");
    // The documented cost of retrying: the copy whose answer was unreadable, and the retry's.
    expect(sentTo(to).length).toBeGreaterThanOrEqual(2);
  });
});
