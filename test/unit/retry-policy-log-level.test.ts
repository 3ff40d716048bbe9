// The level at which a failed delivery attempt reaches the operator's log (retry-policy.ts
// attemptLogLevel, as README's Notifications and Monitoring promise it): a refusal of the
// deployment's own set-up at `error` on every attempt, its provider away or busy at `warn` once a
// minute, and the destination's own failure not at all. SMTP refusals go through smtpFault as
// the email channel reports them.
import { describe, expect, it } from "vitest";
import type { SmtpFailure } from "../../src/notify/channels/smtp-faults.ts";
import { attemptLogLevel, classifyOutcome } from "../../src/notify/retry-policy.ts";
import { emailAttempt, smtpReply } from "../helpers/smtp-replies.ts";

describe("the log level of a failed SMTP attempt", () => {
  it.each<[string, SmtpFailure]>([
    ["a 554 greeting", smtpReply("CONN", "554 mail.example.net ESMTP not accepting connections from 203.0.113.9", "EPROTOCOL")],
    ["a 550 at HELO", smtpReply("HELO", "550 5.7.1 HELO rejected by policy", "EPROTOCOL")],
    ["a 553 at MAIL FROM", smtpReply("MAIL FROM", "553 5.7.1 <alerts@localhost>: Sender address rejected: not owned by user alerts")],
    ["a 550 at MAIL FROM without the words", smtpReply("MAIL FROM", "550 5.1.0 Address rejected")],
    ["a 554 at DATA", smtpReply("DATA", "554 5.5.1 Error: no valid recipients")],
    ["Amazon SES's 554 at the end of DATA", smtpReply("DATA", "554 Message rejected: Sending paused for this account.", "EMESSAGE")],
    ["Postfix's sender refusal at RCPT TO", smtpReply("RCPT TO", "553 5.7.1 <alerts@wallet-alerts.test>: Sender address rejected: not owned by user alerts")],
    ["a refused login", smtpReply("AUTH PLAIN", "535 5.7.8 Error: authentication failed", "EAUTH")],
  ])("is error, on every attempt, for %s: the deployment's set-up, retried until an operator fixes it", (_what, failure) => {
    expect(classifyOutcome(emailAttempt(failure)), failure.text).toBe("retry");
    expect(attemptLogLevel(emailAttempt(failure)), failure.text).toBe("error");
  });

  it.each<[string, SmtpFailure]>([
    ["a 421 at the greeting", smtpReply("CONN", "421 4.3.2 Service shutting down", "EPROTOCOL")],
    // Once taken for a refused sender, and logged at error naming EMAIL_FROM.
    ["a 421 at MAIL FROM", smtpReply("MAIL FROM", "421 4.7.0 Too many connections, closing channel")],
    ["a 452 at MAIL FROM", smtpReply("MAIL FROM", "452 4.3.1 Insufficient system storage")],
    ["a 451 at DATA", smtpReply("DATA", "451 4.3.0 Error: queue file write error", "EMESSAGE")],
    ["no reply at all (refused connection)", { errorCode: "ECONNECTION", smtpResponseCode: undefined, command: "CONN", text: "connect ECONNREFUSED" }],
  ])("is warn, once a minute, for %s: the server away or busy, which passes without anyone", (_what, failure) => {
    expect(classifyOutcome(emailAttempt(failure)), failure.text).toBe("retry");
    expect(attemptLogLevel(emailAttempt(failure)), failure.text).toBe("warn");
  });

  it.each<[string, SmtpFailure]>([
    ["a 550 mailbox unknown at RCPT TO", smtpReply("RCPT TO", "550 5.1.1 <bob@example.com>: Recipient address rejected: User unknown")],
    ["a 452 mailbox full at RCPT TO", smtpReply("RCPT TO", "452 4.2.2 <bob@example.com>: Mailbox full")],
  ])("is nothing for %s: the recipient's answer, which its attempts record", (_what, failure) => {
    expect(attemptLogLevel(emailAttempt(failure)), failure.text).toBeUndefined();
  });
});

describe("the log level of a failed webhook or SMS attempt", () => {
  it("is error for Twilio refusing the account, warn for Twilio away or failing, nothing for a receiver's answer", () => {
    expect(attemptLogLevel({ statusCode: 401, deploymentFault: "credentials" })).toBe("error");
    expect(attemptLogLevel({ statusCode: 400, deploymentFault: "sender" })).toBe("error");
    expect(attemptLogLevel({ statusCode: 503, providerUnavailable: true })).toBe("warn");
    expect(attemptLogLevel({ errorCode: "ECONNREFUSED", providerUnavailable: true })).toBe("warn");
    expect(attemptLogLevel({ statusCode: 503 })).toBeUndefined();
    expect(attemptLogLevel({ errorCode: "ECONNREFUSED" })).toBeUndefined();
    expect(attemptLogLevel({ statusCode: 410 })).toBeUndefined();
  });
});
