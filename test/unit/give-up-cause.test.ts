// Whose a given-up notification is (notify/give-up-cause.ts), for the operator's alerts (README,
// Monitoring): the outcomes each channel reports for the attempt that gave up, and the one rule
// that ties it to retry-policy's isDestinationsFault, which decides what counts against an alert.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { GIVE_UP_CAUSES, giveUpCause, type GiveUpCause } from "../../src/notify/give-up-cause.ts";
import { isDestinationsFault, PERMANENT_ERROR_CODES, type DeliveryOutcome, type DeploymentFault } from "../../src/notify/retry-policy.ts";
import { emailAttempt, smtpReply } from "../helpers/smtp-replies.ts";

describe("the cause of a given-up notification", () => {
  it.each<[string, GiveUpCause, DeliveryOutcome]>([
    // The receiver, mailbox or number refused: failed at once.
    ["a webhook receiver's 404", "destination", { statusCode: 404 }],
    ["a webhook receiver's 410 Gone", "destination", { statusCode: 410 }],
    ["a webhook URL the SSRF guard refuses at connect time", "destination", { errorCode: PERMANENT_ERROR_CODES.addressRefused }],
    ["a webhook URL that cannot be used", "destination", { errorCode: PERMANENT_ERROR_CODES.badDestination }],
    ["a mailbox refused at RCPT TO", "destination", emailAttempt(smtpReply("RCPT TO", "550 5.1.1 <bob@example.com>: Recipient address rejected: User unknown"))],
    ["an email nodemailer refused before sending (no recipient)", "destination", emailAttempt({ errorCode: PERMANENT_ERROR_CODES.badMessage, smtpResponseCode: undefined, command: "API", text: "No recipients defined" })],
    ["an SMS number this service does not text", "destination", { errorCode: PERMANENT_ERROR_CODES.badDestination }],
    ["Twilio's 400 21211 invalid To number", "destination", { statusCode: 400 }],
    // The destination kept failing until the schedule ran out.
    ["a webhook receiver's 503 on the last attempt", "destination", { statusCode: 503 }],
    ["a webhook receiver refusing connections on the last attempt", "destination", { errorCode: "ECONNREFUSED" }],
    ["a full mailbox (452 at RCPT TO) on the last attempt", "destination", emailAttempt(smtpReply("RCPT TO", "452 4.2.2 <bob@example.com>: Mailbox full"))],
    // Our own set-up, refused until the schedule ran out.
    ["a refused SMTP login", "deployment", emailAttempt(smtpReply("AUTH PLAIN", "535 5.7.8 Error: authentication failed", "EAUTH"))],
    ["a refused sender at MAIL FROM", "deployment", emailAttempt(smtpReply("MAIL FROM", "553 5.7.1 <alerts@localhost>: Sender address rejected: not owned by user alerts"))],
    ["a relay that does not relay for our login (at RCPT TO)", "deployment", emailAttempt(smtpReply("RCPT TO", "554 5.7.1 <bob@example.com>: Relay access denied"))],
    ["Twilio refusing the account's credentials", "deployment", { statusCode: 401, deploymentFault: "credentials" }],
    ["Twilio refusing TWILIO_FROM", "deployment", { statusCode: 400, deploymentFault: "sender" }],
    ["a channel with no provider", "deployment", { deploymentFault: "unconfigured" }],
    // Our provider away or busy until the schedule ran out.
    ["the SMTP server unreachable", "provider", emailAttempt({ errorCode: "ECONNECTION", smtpResponseCode: undefined, command: "CONN", text: "connect ECONNREFUSED" })],
    ["the SMTP server's 421", "provider", emailAttempt(smtpReply("CONN", "421 4.3.2 Service shutting down", "EPROTOCOL"))],
    ["Twilio's 503", "provider", { statusCode: 503, providerUnavailable: true }],
    ["Twilio's 429 with a Retry-After", "provider", { statusCode: 429, retryAfter: "30", providerUnavailable: true }],
    // Never tried.
    ["an SMS over its owner's SMS_PER_CALLER_PER_HOUR", "sms_budget", { errorCode: PERMANENT_ERROR_CODES.smsBudgetSpent }],
    ["an email over its owner's EMAIL_PER_CALLER_PER_HOUR", "email_budget", { errorCode: PERMANENT_ERROR_CODES.emailBudgetSpent }],
  ])("of %s is %s", (_what, cause, outcome) => {
    expect(giveUpCause(outcome)).toBe(cause);
  });

  it("is the destination exactly when the failure counts against its alert (isDestinationsFault)", () => {
    const faults: DeploymentFault[] = ["credentials", "sender", "permission", "encryption", "unconfigured"];
    const outcome: fc.Arbitrary<DeliveryOutcome> = fc.record(
      {
        statusCode: fc.integer({ min: 100, max: 599 }),
        errorCode: fc.constantFrom(...Object.values(PERMANENT_ERROR_CODES), "ECONNREFUSED", "ETIMEDOUT", "EAUTH"),
        smtpResponseCode: fc.integer({ min: 200, max: 599 }),
        deploymentFault: fc.constantFrom(...faults),
        providerUnavailable: fc.boolean(),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(outcome, (drawn) => {
        const cause = giveUpCause(drawn);
        expect(GIVE_UP_CAUSES).toContain(cause);
        expect(cause === "destination").toBe(isDestinationsFault(drawn));
      }),
      // Each of our codes alone, every run: a budget's refusal drawn with no fault beside it is rare.
      { examples: Object.values(PERMANENT_ERROR_CODES).map((errorCode): [DeliveryOutcome] => [{ errorCode }]) },
    );
  });
});
