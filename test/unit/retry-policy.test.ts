import { describe, expect, it } from "vitest";
import {
  PERMANENT_ERROR_CODES,
  RETRY_AFTER_MAX_MS,
  classifyOutcome,
  isDestinationsFault,
  marksAlertGone,
  nextDelayMs,
  parseRetryAfterMs,
} from "../../src/notify/retry-policy.ts";

const SCHEDULE = [5_000, 300_000, 1_800_000];
const middle = () => 0.5; // no jitter: 1 - 0.2 + 0.4 × 0.5 = 1

describe("classifyOutcome", () => {
  it.each([200, 201, 204, 299])("counts HTTP %i as delivered", (statusCode) => {
    expect(classifyOutcome({ statusCode })).toBe("delivered");
  });

  it.each([408, 425, 429, 500, 502, 503, 504])("retries HTTP %i", (statusCode) => {
    expect(classifyOutcome({ statusCode })).toBe("retry");
  });

  it.each([301, 302, 307, 308, 400, 401, 403, 404, 410, 413, 422])("gives up on HTTP %i", (statusCode) => {
    expect(classifyOutcome({ statusCode })).toBe("permanent");
  });

  it.each(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "UND_ERR_HEADERS_TIMEOUT", "UND_ERR_BODY_TIMEOUT", "EAI_AGAIN"])(
    "retries the network error %s",
    (errorCode) => {
      expect(classifyOutcome({ errorCode })).toBe("retry");
    },
  );

  it("gives up on a refused address, a bad destination and a bad message", () => {
    for (const errorCode of Object.values(PERMANENT_ERROR_CODES)) {
      expect(classifyOutcome({ errorCode })).toBe("permanent");
    }
  });

  it("retries SMTP 4xx replies and gives up on 5xx", () => {
    expect(classifyOutcome({ smtpResponseCode: 421, errorCode: "EENVELOPE" })).toBe("retry");
    expect(classifyOutcome({ smtpResponseCode: 451, errorCode: "EENVELOPE" })).toBe("retry");
    expect(classifyOutcome({ smtpResponseCode: 550, errorCode: "EENVELOPE" })).toBe("permanent");
    expect(classifyOutcome({ smtpResponseCode: 554 })).toBe("permanent");
    expect(classifyOutcome({ smtpResponseCode: 250 })).toBe("delivered");
  });

  it("retries whatever the status when the provider refused the service's own credentials", () => {
    expect(classifyOutcome({ smtpResponseCode: 535, errorCode: "EAUTH", deploymentFault: "credentials" })).toBe("retry");
    expect(classifyOutcome({ statusCode: 401, deploymentFault: "credentials" })).toBe("retry");
    // A webhook receiver's 401 is the receiver's answer, not a refusal of our credentials.
    expect(classifyOutcome({ statusCode: 401 })).toBe("permanent");
  });

  it("retries whatever the status when the provider refused the service's own sender", () => {
    expect(classifyOutcome({ smtpResponseCode: 553, errorCode: "EENVELOPE", deploymentFault: "sender" })).toBe("retry");
    expect(classifyOutcome({ statusCode: 400, deploymentFault: "sender" })).toBe("retry");
  });

  it("retries whatever the status when the provider refused the service's account permission to send there", () => {
    expect(classifyOutcome({ smtpResponseCode: 554, errorCode: "EENVELOPE", deploymentFault: "permission" })).toBe("retry");
    expect(classifyOutcome({ statusCode: 400, deploymentFault: "permission" })).toBe("retry");
  });

  it("counts an outcome without any code (outbox file, SMS log) as delivered", () => {
    expect(classifyOutcome({})).toBe("delivered");
  });

  it("marks the alert gone on 410 only", () => {
    expect(marksAlertGone({ statusCode: 410 })).toBe(true);
    expect(marksAlertGone({ statusCode: 404 })).toBe(false);
    expect(marksAlertGone({ errorCode: "ECONNREFUSED" })).toBe(false);
  });
});

describe("parseRetryAfterMs", () => {
  const now = Date.parse("2026-03-01T12:00:00Z");

  it("reads delta-seconds", () => {
    expect(parseRetryAfterMs("120", now)).toBe(120_000);
    expect(parseRetryAfterMs(" 0 ", now)).toBe(0);
  });

  it("reads an HTTP-date relative to now, and a past date as zero", () => {
    expect(parseRetryAfterMs("Sun, 01 Mar 2026 12:00:30 GMT", now)).toBe(30_000);
    expect(parseRetryAfterMs("Sun, 01 Mar 2026 11:00:00 GMT", now)).toBe(0);
  });

  it("ignores a missing or unreadable value", () => {
    expect(parseRetryAfterMs(undefined, now)).toBeUndefined();
    expect(parseRetryAfterMs("soon", now)).toBeUndefined();
    expect(parseRetryAfterMs("1.5", now)).toBeUndefined();
    expect(parseRetryAfterMs("-3", now)).toBeUndefined();
  });
});

describe("nextDelayMs", () => {
  it("follows the schedule, one entry per attempt made", () => {
    expect(nextDelayMs(1, SCHEDULE, middle)).toBe(5_000);
    expect(nextDelayMs(2, SCHEDULE, middle)).toBe(300_000);
    expect(nextDelayMs(3, SCHEDULE, middle)).toBe(1_800_000);
  });

  it("returns null once the schedule is exhausted, so the notification fails", () => {
    expect(nextDelayMs(4, SCHEDULE, middle)).toBeNull();
    expect(nextDelayMs(1, [], middle)).toBeNull();
    expect(nextDelayMs(0, SCHEDULE, middle)).toBeNull();
  });

  it("spreads the delay by ±20 % at the extremes of the random draw", () => {
    expect(nextDelayMs(1, SCHEDULE, () => 0)).toBe(4_000);
    expect(nextDelayMs(1, SCHEDULE, () => 0.999999)).toBe(6_000);
  });

  it("waits at least as long as Retry-After asks", () => {
    expect(nextDelayMs(1, [100], middle, 1_000)).toBe(1_000);
    expect(nextDelayMs(1, SCHEDULE, middle, 60_000)).toBe(60_000);
  });

  it("keeps the longer scheduled delay when Retry-After is shorter", () => {
    expect(nextDelayMs(2, SCHEDULE, middle, 10_000)).toBe(300_000);
  });

  it("clamps Retry-After to at least 1 s and at most 24 h", () => {
    expect(nextDelayMs(1, [100], middle, 0)).toBe(1_000);
    expect(nextDelayMs(1, SCHEDULE, middle, 7 * 24 * 3_600_000)).toBe(RETRY_AFTER_MAX_MS);
  });

  it("does not let Retry-After extend an exhausted schedule", () => {
    expect(nextDelayMs(4, SCHEDULE, middle, 1_000)).toBeNull();
  });
});

describe("isDestinationsFault", () => {
  it("counts a receiver's or a recipient's failure against the alert", () => {
    expect(isDestinationsFault({ statusCode: 503 })).toBe(true);
    expect(isDestinationsFault({ errorCode: "ECONNREFUSED" })).toBe(true);
    expect(isDestinationsFault({ smtpResponseCode: 550, errorCode: "EENVELOPE" })).toBe(true);
  });

  it("never counts the deployment's refusals or an outage of its own provider against the alert", () => {
    for (const deploymentFault of ["credentials", "sender", "permission", "encryption"] as const) {
      expect(isDestinationsFault({ smtpResponseCode: 554, deploymentFault }), deploymentFault).toBe(false);
    }
    expect(isDestinationsFault({ errorCode: "ECONNECTION", providerUnavailable: true })).toBe(false);
    expect(isDestinationsFault({ statusCode: 503, providerUnavailable: true })).toBe(false);
  });

  it("never counts an SMS held back by its owner's hourly budget against the alert (it was never tried), and gives it up", () => {
    const heldBack = { errorCode: PERMANENT_ERROR_CODES.smsBudgetSpent };
    expect(isDestinationsFault(heldBack)).toBe(false);
    expect(classifyOutcome(heldBack)).toBe("permanent");
    expect(isDestinationsFault({ errorCode: PERMANENT_ERROR_CODES.badDestination })).toBe(true);
  });

  it("never counts an email held back by its owner's hourly budget against the alert (it was never tried), and gives it up", () => {
    const heldBack = { errorCode: PERMANENT_ERROR_CODES.emailBudgetSpent };
    expect(isDestinationsFault(heldBack)).toBe(false);
    expect(classifyOutcome(heldBack)).toBe("permanent");
  });
});
