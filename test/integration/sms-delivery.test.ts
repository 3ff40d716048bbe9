import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Writable } from "node:stream";
import twilio from "twilio";
import { eq } from "drizzle-orm";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { alerts } from "../../src/db/schema.ts";
import { createLogger } from "../../src/logger.ts";
import { createChannels } from "../../src/notify/channels/index.ts";
import { baseUrlRequestClient, createSmsChannel, describeTwilioError } from "../../src/notify/channels/sms.ts";
import { classifyOutcome, isDestinationsFault } from "../../src/notify/retry-policy.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { failingFor } from "../helpers/failure-run.ts";
import {
  alertRow,
  attemptsOf,
  isFinished,
  samplePayload,
  seedAlert,
  seedNotification,
  startDeliveryWorkers,
  waitForNotification,
  type DeliveryWorkers,
} from "../helpers/delivery.ts";
import { TEST_TWILIO, startTwilioStandin, twilioSettings, type TwilioStandin } from "../helpers/twilio-standin.ts";

let t: TestApp;
let standin: TwilioStandin;
let workers: DeliveryWorkers;

beforeAll(async () => {
  standin = await startTwilioStandin();
  t = await startTestApp("sms-delivery", {
    ...twilioSettings(standin.baseUrl),
    RETRY_SCHEDULE: "100ms",
  });
  workers = startDeliveryWorkers(t, { smsTimeoutMs: 5_000 });
});
afterAll(async () => {
  await workers?.close();
  await standin?.close();
  await t?.close();
});

const MESSAGES_PATH = `/2010-04-01/Accounts/${TEST_TWILIO.accountSid}/Messages.json`;

/** One SMS sent straight through a channel whose Twilio API is at `baseUrl`: what the attempt got. */
async function sendOneThrough(baseUrl: string, to: string) {
  const channels = createChannels({ ...t.config, twilio: { ...t.config.twilio, baseUrl } }, t.deps.logger, { smsTimeoutMs: 2_000 });
  try {
    const alert = await seedAlert(t, { method: "sms", recipient: to });
    return await channels.sms.send({ notificationId: `ntf_${to.slice(1)}`, destination: to, payload: samplePayload(alert), secrets: [], attemptAt: new Date() });
  } finally {
    await channels.close();
  }
}

describe("SMS delivery through the Twilio SDK", () => {
  it("sends a valid message that Twilio's contract accepts (201) and counts it delivered", async () => {
    const alert = await seedAlert(t, { method: "sms", recipient: "+14155550001" });
    const id = await seedNotification(t, alert, "sms", "+14155550001");

    const row = await waitForNotification(t, id, isFinished);
    expect(row.status).toBe("delivered");
    const [attempt] = await attemptsOf(t, id);
    expect(attempt!.statusCode).toBe(201);
    expect(JSON.parse(attempt!.responseBody!)).toMatchObject({ sid: expect.stringMatching(/^SM/) });
    // The SDK reached the stand-in (not api.twilio.com), and the request passed validation.
    const log = standin.log();
    expect(log).toContain(`post ${MESSAGES_PATH}`);
    expect(log).toContain("The request passed the validation rules");
  });

  it("treats a message the API rejects as malformed (422 from Twilio's contract) as permanent", async () => {
    // The SDK refuses to build a message without To, so the malformed request is sent
    // through the same client and turned into the SDK's exception the way the SDK does.
    const client = twilio(TEST_TWILIO.accountSid, TEST_TWILIO.authToken, {
      httpClient: baseUrlRequestClient(standin.baseUrl, 5_000),
    });
    const response = await client.request({
      method: "post",
      uri: `https://api.twilio.com${MESSAGES_PATH}`,
      data: { From: TEST_TWILIO.from, Body: "no recipient" },
    });
    expect(response.statusCode).toBe(422);
    expect(standin.log()).toContain("Request body must have required property 'To'");

    let thrown: unknown;
    try {
      // Version.throwException is what every SDK resource call runs on a 4xx/5xx (private in the typings).
      (client.api.v2010 as unknown as { throwException: (r: unknown) => never }).throwException(response);
    } catch (error) {
      thrown = error;
    }
    const result = describeTwilioError(thrown);
    expect(result.statusCode).toBe(422);
    expect(classifyOutcome(result)).toBe("permanent");
  });

  it("refuses a message without a recipient before sending, permanently", async () => {
    const alert = await seedAlert(t, { method: "sms", recipient: "+14155550002" });
    const result = await workers.channels.sms.send({
      notificationId: "ntf_no_to",
      destination: undefined as never,
      payload: samplePayload(alert),
      secrets: [],
      attemptAt: new Date(),
    });
    expect(result.errorCode).toBe("BAD_MESSAGE");
    expect(classifyOutcome(result)).toBe("permanent");
  });

  it("retries when Twilio cannot be reached, then fails once the schedule is used up", async () => {
    const result = await sendOneThrough("http://127.0.0.1:9", "+14155550003");
    expect(result.errorCode).toBe("ECONNREFUSED");
    expect(result.error).not.toContain("127.0.0.1");
    expect(classifyOutcome(result)).toBe("retry");
  });

  it("maps Twilio's 4xx error codes to permanent and 429/5xx to retry", () => {
    const invalidTo = describeTwilioError({ status: 400, code: 21211, message: "The 'To' number is not a valid phone number." });
    expect(invalidTo.error).toBe("Twilio 21211: The 'To' number is not a valid phone number.");
    expect(classifyOutcome(invalidTo)).toBe("permanent");
    expect(classifyOutcome(describeTwilioError({ status: 400, code: 21610, message: "unsubscribed" }))).toBe("permanent");
    expect(classifyOutcome(describeTwilioError({ status: 400, code: 21614, message: "not a mobile number" }))).toBe("permanent");
    expect(classifyOutcome(describeTwilioError({ status: 429, code: 20429, message: "Too Many Requests" }))).toBe("retry");
    expect(classifyOutcome(describeTwilioError({ status: 503, message: "Service Unavailable" }))).toBe("retry");
  });

  it("retries Twilio's refusals of the service's own From number (21212, 21606, 21659, 21611), and keeps the recipient's refusals permanent", () => {
    for (const code of [21212, 21606, 21659, 21611]) {
      const refused = describeTwilioError({ status: 400, code, message: "the 'From' number cannot send this" });
      expect(refused.deploymentFault, String(code)).toBe("sender");
      expect(classifyOutcome(refused), String(code)).toBe("retry");
    }
    // Invalid To, unsubscribed, not a mobile number: the recipient's.
    for (const code of [21211, 21610, 21614]) {
      const refused = describeTwilioError({ status: 400, code, message: "the 'To' number cannot get this" });
      expect(refused.deploymentFault, String(code)).toBeUndefined();
      expect(classifyOutcome(refused), String(code)).toBe("permanent");
    }
  });

  it("retries Twilio's refusal 21608 (a trial account) as the deployment's, not the recipient's", () => {
    const refused = describeTwilioError({
      status: 400,
      code: 21608,
      message: "The number +14155550101 is unverified. Trial accounts cannot send messages to unverified numbers",
    });
    expect(refused.deploymentFault).toBe("permission");
    expect(classifyOutcome(refused)).toBe("retry");
    expect(isDestinationsFault(refused)).toBe(false);
  });

  it("fails Twilio's refusal 21408 (a country the account's Geo Permissions leave out) for good, as the recipient's, saying the country is not served", () => {
    const refused = describeTwilioError({
      status: 400,
      code: 21408,
      message: "Permission to send an SMS has not been enabled for the region indicated by the 'To' number",
      moreInfo: "https://www.twilio.com/docs/errors/21408",
    });
    expect(refused.deploymentFault).toBeUndefined();
    expect(classifyOutcome(refused)).toBe("permanent");
    expect(isDestinationsFault(refused)).toBe(true);
    expect(refused.error).toBe(
      "Twilio 21408: the number's country is not enabled for this service's SMS (its Twilio account's Geo Permissions), so it is not texted: " +
        "give the alert a number in a country the service serves " +
        "(Twilio: Permission to send an SMS has not been enabled for the region indicated by the 'To' number) (https://www.twilio.com/docs/errors/21408)",
    );
  });

  it("counts Twilio unreachable, busy (429) or failing (5xx) as the provider's trouble, not the recipient's", () => {
    const outages = [
      describeTwilioError({ status: 429, code: 20429, message: "Too Many Requests" }),
      describeTwilioError({ status: 500, code: 20500, message: "Internal Server Error" }),
      describeTwilioError({ status: 503, message: "Service Unavailable" }),
      describeTwilioError(Object.assign(new Error("connect ECONNREFUSED 10.0.0.7:443"), { code: "ECONNREFUSED" })),
      describeTwilioError(Object.assign(new Error("timeout of 15000ms exceeded"), { code: "ECONNABORTED" })),
    ];
    for (const outage of outages) {
      expect(outage.providerUnavailable, outage.error).toBe(true);
      expect(isDestinationsFault(outage), outage.error).toBe(false);
    }
    // An invalid To stays the recipient's.
    expect(isDestinationsFault(describeTwilioError({ status: 400, code: 21211, message: "invalid To" }))).toBe(true);
  });

  it("retries when Twilio refuses the service's own credentials (401, error 20003): the operator's to fix", async () => {
    // Twilio's documented answer to a wrong account SID or auth token.
    const refusing = createServer((_request, response) => {
      response.writeHead(401, { "content-type": "application/json" });
      response.end(JSON.stringify({ code: 20003, message: "Authenticate", more_info: "https://www.twilio.com/docs/errors/20003", status: 401 }));
    });
    await new Promise<void>((resolve) => refusing.listen(0, "127.0.0.1", resolve));
    try {
      const result = await sendOneThrough(`http://127.0.0.1:${(refusing.address() as AddressInfo).port}`, "+14155550004");
      expect(result.statusCode).toBe(401);
      expect(result.error).toContain("Twilio 20003");
      expect(result.deploymentFault).toBe("credentials");
      expect(classifyOutcome(result)).toBe("retry");
    } finally {
      await new Promise((resolve) => refusing.close(resolve));
    }
  });

  it("logs the SMS at info with the number masked and its text only at debug, and says in the attempt it was not sent, with SMS_TRANSPORT=log and no Twilio", async () => {
    const lines: string[] = [];
    const logger = createLogger("debug", new Writable({ write: (chunk, _enc, done) => (lines.push(String(chunk)), done()) }));
    const unconfigured = createChannels(
      {
        ...t.config,
        smsTransport: "log",
        twilio: { accountSid: undefined, authToken: undefined, from: undefined, baseUrl: "https://api.twilio.com", statusCallbackUrl: undefined },
      },
      logger,
    );
    try {
      const alert = await seedAlert(t, { method: "sms", recipient: "+14155550004" });
      const result = await unconfigured.sms.send({
        notificationId: "ntf_logged",
        destination: "+14155550004",
        payload: samplePayload(alert),
        secrets: [],
        attemptAt: new Date(),
      });
      expect(classifyOutcome(result)).toBe("delivered");
      expect(result).toMatchObject({ notSent: true, responseBody: "not sent: written to the log (SMS_TRANSPORT=log)" });
      const entries = lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((entry) => entry.notificationId === "ntf_logged");
      expect(entries).toEqual([
        expect.objectContaining({ level: 30, to: "+*******0004", characters: expect.any(Number) }),
        expect.objectContaining({ level: 20, to: "+*******0004", sms: expect.stringMatching(/^Risk alert on Treasury: Large transfer\. .* Wallet risk \d+\/100\.$/) }),
      ]);
      expect(lines.join("")).not.toContain("+14155550004");
      expect(entries[0]).not.toHaveProperty("sms");
    } finally {
      await unconfigured.close();
    }
  });

  it("logs nothing of the SMS and fails the attempt as the deployment's fault naming TWILIO_* when neither Twilio nor SMS_TRANSPORT=log is set", async () => {
    const lines: string[] = [];
    const logger = createLogger("debug", new Writable({ write: (chunk, _enc, done) => (lines.push(String(chunk)), done()) }));
    const off = createChannels(
      {
        ...t.config,
        smsTransport: undefined,
        twilio: { accountSid: undefined, authToken: undefined, from: undefined, baseUrl: "https://api.twilio.com", statusCallbackUrl: undefined },
      },
      logger,
    );
    try {
      const alert = await seedAlert(t, { method: "sms", recipient: "+14155550004" });
      const result = await off.sms.send({ notificationId: "ntf_off", destination: "+14155550004", payload: samplePayload(alert), secrets: [], attemptAt: new Date() });
      expect(result).toMatchObject({ deploymentFault: "unconfigured", error: expect.stringContaining("TWILIO_ACCOUNT_SID") });
      expect(classifyOutcome(result)).toBe("retry");
      expect(off.describe().sms).toBe("off (TWILIO_* not set)");
      expect(lines.filter((line) => line.includes("ntf_off"))).toEqual([]);
    } finally {
      await off.close();
    }
  });
});

// The operator's From number, not the recipient, is refused: the message must wait for the fix.
describe("SMS delivery when Twilio refuses the service's From number", () => {
  const from = "+15005550009";
  let senderApp: TestApp;
  let senderWorkers: DeliveryWorkers;

  beforeAll(async () => {
    senderApp = await startTestApp("sms-sender", {
      ...twilioSettings(standin.baseUrl, from),
      RETRY_SCHEDULE: "300ms,300ms,300ms",
    });
    senderWorkers = startDeliveryWorkers(senderApp, { smsTimeoutMs: 5_000 });
  });
  afterEach(() => standin.acceptSender(from));
  afterAll(async () => {
    await senderWorkers?.close();
    await senderApp?.close();
  });

  it("never disables an alert for a From number that cannot send SMS (21606), even when its schedule runs out", async () => {
    standin.refuseSender(from, {
      status: 400,
      code: 21606,
      message: "The 'From' phone number provided is not a valid, SMS-capable inbound phone number or short code for your account.",
    });
    const alert = await seedAlert(senderApp, { method: "sms", recipient: "+14155550101" });
    // A day of permanent failures already: one more counted failure would disable the alert.
    await failingFor(senderApp, alert.alertId);
    const id = await seedNotification(senderApp, alert, "sms", "+14155550101");

    const row = await waitForNotification(senderApp, id, isFinished);
    expect(row.status).toBe("failed");
    const attempts = await attemptsOf(senderApp, id);
    expect(attempts.map((attempt) => attempt.statusCode)).toEqual([400, 400, 400, 400]);
    expect(attempts[0]!.error).toContain("Twilio 21606");
    expect((await alertRow(senderApp, alert.alertId)).status).toBe("active");
  });

  it("keeps retrying while the From number's queue is full (21611) and delivers once Twilio takes it, without starting a failure run", async () => {
    standin.refuseSender(from, { status: 400, code: 21611, message: "This 'From' number has exceeded the maximum number of queued messages" });
    const alert = await seedAlert(senderApp, { method: "sms", recipient: "+14155550102" });
    const id = await seedNotification(senderApp, alert, "sms", "+14155550102");

    const refused = await waitForNotification(senderApp, id, (row) => row.attemptCount >= 1);
    expect(refused.status).toBe("retrying");
    expect((await attemptsOf(senderApp, id))[0]!.error).toContain("Twilio 21611");
    expect((await alertRow(senderApp, alert.alertId)).failingSince).toBeNull();

    standin.acceptSender(from); // the queue drained
    expect((await waitForNotification(senderApp, id, isFinished)).status).toBe("delivered");
    const row = await alertRow(senderApp, alert.alertId);
    expect(row.status).toBe("active");
    expect(row.failingSince).toBeNull();
  });
});

// What is the operator's, not the recipient's: Twilio itself being away or busy. Retried on the
// schedule, and never counted against the alert.
describe("SMS delivery when Twilio is unavailable", () => {
  let reachApp: TestApp;
  let reachWorkers: DeliveryWorkers;
  const refusedTo = new Set<string>();

  beforeAll(async () => {
    reachApp = await startTestApp("sms-reach", {
      ...twilioSettings(standin.baseUrl),
      RETRY_SCHEDULE: "300ms,300ms,300ms",
    });
    reachWorkers = startDeliveryWorkers(reachApp, { smsTimeoutMs: 5_000 });
  });
  afterEach(() => {
    for (const to of refusedTo) standin.acceptRecipient(to);
    refusedTo.clear();
  });
  afterAll(async () => {
    await reachWorkers?.close();
    await reachApp?.close();
  });

  const refuse = (to: string, error: { status: number; code: number; message: string }) => {
    refusedTo.add(to);
    standin.refuseRecipient(to, error);
  };
  const dayAndAnHourAgo = () => new Date(Date.now() - 25 * 3_600_000);

  it("never counts a Twilio outage (503, 429) against an alert: no run started, none extended into a disabling", async () => {
    const failingTo = "+14155550201";
    const healthyTo = "+14155550202";
    refuse(failingTo, { status: 503, code: 20503, message: "Service Unavailable" });
    refuse(healthyTo, { status: 429, code: 20429, message: "Too Many Requests" });
    const failing = await seedAlert(reachApp, { method: "sms", recipient: failingTo });
    const since = dayAndAnHourAgo();
    await reachApp.deps.db.update(alerts).set({ failingSince: since }).where(eq(alerts.id, failing.alertId));
    const healthy = await seedAlert(reachApp, { method: "sms", recipient: healthyTo });
    const ids = [await seedNotification(reachApp, failing, "sms", failingTo), await seedNotification(reachApp, healthy, "sms", healthyTo)];

    for (const id of ids) {
      const row = await waitForNotification(reachApp, id, isFinished);
      expect(row.status).toBe("failed");
      expect(row.attemptCount).toBe(4);
    }
    const failingRow = await alertRow(reachApp, failing.alertId);
    expect(failingRow.status).toBe("active");
    expect(failingRow.failingSince).toEqual(since);
    expect((await alertRow(reachApp, healthy.alertId)).failingSince).toBeNull();
  });
});

// A country the Twilio account's Geo Permissions leave out is one the operator chose not to serve,
// and any caller can name a number there: the recipient's failure, as a number outside
// SMS_ALLOWED_COUNTRIES is, not a setting of the operator's to fix.
describe("SMS delivery to a country the Twilio account's Geo Permissions leave out (21408)", () => {
  let geoApp: TestApp;
  let geoWorkers: DeliveryWorkers;
  const lines: string[] = [];
  const refusedTo = new Set<string>();

  beforeAll(async () => {
    geoApp = await startTestApp("sms-geo", { ...twilioSettings(standin.baseUrl), RETRY_SCHEDULE: "300ms,300ms,300ms" });
    // The app's own logger is silent: the workers get one whose lines the tests read.
    const logger = createLogger("debug", new Writable({ write: (chunk, _enc, done) => (lines.push(String(chunk)), done()) }));
    geoWorkers = startDeliveryWorkers({ ...geoApp, deps: { ...geoApp.deps, logger } }, { smsTimeoutMs: 5_000 });
  });
  afterEach(() => {
    for (const to of refusedTo) standin.acceptRecipient(to);
    refusedTo.clear();
  });
  afterAll(async () => {
    await geoWorkers?.close();
    await geoApp?.close();
  });

  const refuseRegion = (to: string) => {
    refusedTo.add(to);
    standin.refuseRecipient(to, {
      status: 400,
      code: 21408,
      message: `Permission to send an SMS has not been enabled for the region indicated by the 'To' number: ${to}.`,
    });
  };
  const logged = () => lines.map((line) => JSON.parse(line) as { level: number; msg: string; country?: string; notificationId?: string });
  const geoLines = () => logged().filter((entry) => entry.msg.includes("(21408)"));

  it("fails the notification at its first attempt, without retrying, saying the country is not served", async () => {
    const to = "+4915112345601";
    refuseRegion(to);
    const alert = await seedAlert(geoApp, { method: "sms", recipient: to });
    const id = await seedNotification(geoApp, alert, "sms", to);

    const row = await waitForNotification(geoApp, id, isFinished);
    expect(row.status).toBe("failed");
    expect(row.attemptCount).toBe(1);
    const attempts = await attemptsOf(geoApp, id);
    expect(attempts.map((attempt) => attempt.statusCode)).toEqual([400]);
    expect(attempts[0]!.error).toMatch(/^Twilio 21408: the number's country is not enabled for this service's SMS/);
    // The first counted failure starts the alert's run of failures.
    const health = await alertRow(geoApp, alert.alertId);
    expect(health.status).toBe("active");
    expect(health.failingSince).not.toBeNull();
  });

  it("counts it against the alert: a day into a run of failures, it disables the alert", async () => {
    const to = "+4915112345602";
    refuseRegion(to);
    const alert = await seedAlert(geoApp, { method: "sms", recipient: to });
    await failingFor(geoApp, alert.alertId);
    const id = await seedNotification(geoApp, alert, "sms", to);

    expect((await waitForNotification(geoApp, id, isFinished)).status).toBe("failed");
    expect((await alertRow(geoApp, alert.alertId)).status).toBe("disabled");
  });

  it("logs it at warn naming the country, once a minute per country (the repeats at debug), never at error", async () => {
    // Countries the tests above did not use (their German numbers were warned of already).
    const france = ["+33612345678", "+33612345679"];
    const italy = "+393123456789";
    const ids: string[] = [];
    for (const to of [...france, italy]) {
      refuseRegion(to);
      ids.push(await seedNotification(geoApp, await seedAlert(geoApp, { method: "sms", recipient: to }), "sms", to));
    }
    for (const id of ids) expect((await waitForNotification(geoApp, id, isFinished)).status).toBe("failed");

    const ofCountry = (country: string, level: number) => geoLines().filter((entry) => entry.country === country && entry.level === level);
    expect(ofCountry("FR", 40)).toHaveLength(1);
    expect(ofCountry("FR", 20)).toHaveLength(1);
    expect([...ofCountry("FR", 40), ...ofCountry("FR", 20)].map((entry) => entry.notificationId).sort()).toEqual(ids.slice(0, 2).sort());
    expect(ofCountry("IT", 40).map((entry) => entry.notificationId)).toEqual([ids[2]]);
    expect(logged().filter((entry) => entry.level >= 50)).toEqual([]);
  });
});

describe("the SMS channel's description in the worker's start-up line", () => {
  it("names TWILIO_BASE_URL without the password a proxy URL carries", () => {
    const sms = createSmsChannel({
      twilio: { ...TEST_TWILIO, baseUrl: "https://proxyuser:ProxyPass123@twilio-proxy.example.com", statusCallbackUrl: undefined },
      allowedCountries: undefined,
      timeoutMs: 1_000,
      logger: createLogger("silent"),
    });
    expect(sms.describe()).toContain("twilio-proxy.example.com");
    expect(sms.describe()).not.toContain("ProxyPass123");
  });
});
