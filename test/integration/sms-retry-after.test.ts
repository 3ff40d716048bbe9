// Twilio's Retry-After on a 429 or 503: the SDK drops the answer's headers, so the SMS
// channel's own request client keeps it, and the retry policy then waits at least that long
// (as it does for a webhook receiver's).
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createChannels } from "../../src/notify/channels/index.ts";
import { describeTwilioError } from "../../src/notify/channels/sms.ts";
import { classifyOutcome, isDestinationsFault } from "../../src/notify/retry-policy.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { attemptsOf, samplePayload, seedAlert, seedNotification, startDeliveryWorkers, waitForNotification, type DeliveryWorkers } from "../helpers/delivery.ts";
import { startTwilioStandin, twilioSettings, type TwilioErrorAnswer, type TwilioStandin } from "../helpers/twilio-standin.ts";

let t: TestApp;
let standin: TwilioStandin;
let workers: DeliveryWorkers;
const refusedTo = new Set<string>();

beforeAll(async () => {
  standin = await startTwilioStandin();
  t = await startTestApp("sms-retry-after", {
    ...twilioSettings(standin.baseUrl),
    RETRY_SCHEDULE: "300ms,300ms,300ms",
  });
  workers = startDeliveryWorkers(t, { smsTimeoutMs: 5_000 });
});
afterEach(() => {
  for (const to of refusedTo) standin.acceptRecipient(to);
  refusedTo.clear();
});
afterAll(async () => {
  await workers?.close();
  await standin?.close();
  await t?.close();
});

const TOO_MANY_REQUESTS: TwilioErrorAnswer = { status: 429, code: 20429, message: "Too Many Requests", headers: { "retry-after": "120" } };

function refuse(to: string, error: TwilioErrorAnswer) {
  refusedTo.add(to);
  standin.refuseRecipient(to, error);
}

/** One SMS to `to` sent straight through the app's SMS channel: what the attempt got. */
async function sendOne(to: string) {
  const channels = createChannels(t.config, t.deps.logger, { smsTimeoutMs: 5_000 });
  try {
    const alert = await seedAlert(t, { method: "sms", recipient: to });
    return await channels.sms.send({ notificationId: `ntf_${to.slice(1)}`, destination: to, payload: samplePayload(alert), secrets: [], attemptAt: new Date() });
  } finally {
    await channels.close();
  }
}

describe("Twilio's Retry-After on the SMS channel", () => {
  it("passes on the Retry-After of Twilio's 429 (Retry-After: 120) as the attempt's retryAfter, with the SDK's error", async () => {
    const to = "+14155550301";
    refuse(to, TOO_MANY_REQUESTS);

    const result = await sendOne(to);
    expect(result.retryAfter).toBe("120");
    // Still Twilio's answer as the SDK reports it: status, error code, message, more info.
    expect(result.statusCode).toBe(429);
    expect(result.error).toBe("Twilio 20429: Too Many Requests (https://www.twilio.com/docs/errors/20429)");
    expect(classifyOutcome(result)).toBe("retry");
    expect(isDestinationsFault(result)).toBe(false);
  });

  it("passes on the Retry-After of Twilio's 503 given as an HTTP-date", async () => {
    const to = "+14155550302";
    const at = new Date(Date.now() + 600_000).toUTCString();
    refuse(to, { status: 503, code: 20503, message: "Service Unavailable", headers: { "Retry-After": at } });

    const result = await sendOne(to);
    expect(result.statusCode).toBe(503);
    expect(result.retryAfter).toBe(at);
    expect(result.error).toContain("Twilio 20503: Service Unavailable");
  });

  it("schedules the next attempt no earlier than Twilio's Retry-After (120 s), not at the schedule's first step (300 ms)", async () => {
    const to = "+14155550303";
    refuse(to, TOO_MANY_REQUESTS);
    const alert = await seedAlert(t, { method: "sms", recipient: to });
    const id = await seedNotification(t, alert, "sms", to);

    const retrying = await waitForNotification(t, id, (row) => row.status === "retrying");
    const [first] = await attemptsOf(t, id);
    expect(first!.statusCode).toBe(429);
    expect(retrying.nextAttemptAt!.getTime() - first!.at.getTime()).toBeGreaterThanOrEqual(120_000);
    // Not tried again meanwhile: the schedule alone would have made a second attempt by now.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(await attemptsOf(t, id)).toHaveLength(1);
  });
});

describe("describeTwilioError and Retry-After", () => {
  it("copies the error's retryAfter to the attempt result, and sets none when the error has none", () => {
    const withRetryAfter = describeTwilioError(Object.assign(new Error("Too Many Requests"), { status: 429, code: 20429, retryAfter: "120" }));
    expect(withRetryAfter).toMatchObject({ statusCode: 429, retryAfter: "120", providerUnavailable: true });
    expect(classifyOutcome(withRetryAfter)).toBe("retry");

    const withDate = describeTwilioError({ status: 503, message: "Service Unavailable", retryAfter: "Wed, 21 Oct 2015 07:28:00 GMT" });
    expect(withDate.retryAfter).toBe("Wed, 21 Oct 2015 07:28:00 GMT");

    for (const error of [
      { status: 429, code: 20429, message: "Too Many Requests" },
      { status: 503, message: "Service Unavailable", retryAfter: "" },
      { status: 503, message: "Service Unavailable", retryAfter: 120 },
    ]) {
      const result = describeTwilioError(error);
      expect(result.statusCode, JSON.stringify(error)).toBe(error.status);
      expect(result, JSON.stringify(error)).not.toHaveProperty("retryAfter");
    }
  });
});
