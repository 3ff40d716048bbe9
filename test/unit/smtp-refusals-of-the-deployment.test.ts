// Which SMTP refusals are the deployment's (retried, never counted against the alert) and which
// the recipient's: Postfix's own words at RCPT TO, and a 5xx at any step but RCPT TO.
import { describe, expect, it } from "vitest";
import { smtpFault, type SmtpFailure } from "../../src/notify/channels/smtp-faults.ts";
import { classifyOutcome, isDestinationsFault } from "../../src/notify/retry-policy.ts";
import { emailAttempt, smtpReply } from "../helpers/smtp-replies.ts";

describe("Postfix's refusals at RCPT TO", () => {
  it("counts its delayed refusals of the service's sender, client, EHLO name or missing login as the deployment's, and keeps its refusals of the recipient the recipient's", () => {
    const deployment: Array<[string, "sender" | "permission" | "credentials"]> = [
      // smtpd_sender_restrictions, reported at RCPT TO (smtpd_delay_reject = yes).
      ["553 5.7.1 <alerts@wallet-alerts.test>: Sender address rejected: not owned by user alerts", "sender"],
      ["554 5.7.1 <alerts@wallet-alerts.test>: Sender address rejected: Access denied", "sender"],
      ["450 4.1.8 <alerts@wallet-alerts.test>: Sender address rejected: Domain not found", "sender"],
      ["504 5.5.2 <alerts>: Sender address rejected: need fully-qualified address", "sender"],
      ["554 5.7.1 Service unavailable; Sender address [alerts@wallet-alerts.test] blocked using dbl.spamhaus.org", "sender"],
      // reject_sender_login_mismatch for a client that gave no login: the login is missing.
      ["553 5.7.1 <alerts@wallet-alerts.test>: Sender address rejected: not logged in", "credentials"],
      ["550 5.7.1 Authentication required", "credentials"],
      // smtpd_client_restrictions and smtpd_helo_restrictions, reported at RCPT TO.
      ["554 5.7.1 <unknown[203.0.113.9]>: Client host rejected: Access denied", "permission"],
      ["450 4.7.1 Client host rejected: cannot find your hostname, [203.0.113.9]", "permission"],
      ["554 5.7.1 Service unavailable; Client host [203.0.113.9] blocked using zen.spamhaus.org", "permission"],
      ["504 5.5.2 <a1b2c3d4e5f6>: Helo command rejected: need fully-qualified hostname", "permission"],
      ["450 4.7.1 <worker.internal>: Helo command rejected: Host not found", "permission"],
    ];
    for (const [text, fault] of deployment) {
      const failure = smtpReply("RCPT TO", text);
      expect(smtpFault(failure), text).toEqual({ deploymentFault: fault });
      expect(classifyOutcome(emailAttempt(failure)), text).toBe("retry");
      expect(isDestinationsFault(emailAttempt(failure)), text).toBe(false);
    }

    for (const text of [
      "550 5.1.1 <bob@example.com>: Recipient address rejected: User unknown in virtual mailbox table",
      "554 5.7.1 <bob@example.com>: Recipient address rejected: Access denied",
      "550 5.1.1 <bob@example.com>: Recipient address rejected: User unknown in local recipient table",
    ]) {
      const failure = smtpReply("RCPT TO", text);
      expect(smtpFault(failure), text).toEqual({});
      expect(classifyOutcome(emailAttempt(failure)), text).toBe("permanent");
      expect(isDestinationsFault(emailAttempt(failure)), text).toBe(true);
    }
  });
});

describe("a 5xx at any step but RCPT TO", () => {
  it("is never the recipient's: retried on the schedule and not counted, at the greeting, HELO, DATA or its end", () => {
    const refusals: Array<[SmtpFailure, string]> = [
      [smtpReply("CONN", "554 mail.example.net ESMTP not accepting connections from 203.0.113.9", "EPROTOCOL"), "permission"],
      [smtpReply("HELO", "550 5.7.1 HELO rejected by policy", "EPROTOCOL"), "permission"],
      [smtpReply("DATA", "554 5.5.1 Error: no valid recipients"), "permission"],
      // Amazon SES, end of DATA: the account is paused.
      [smtpReply("DATA", "554 Message rejected: Sending paused for this account.", "EMESSAGE"), "permission"],
      // Office 365, end of DATA: the login may not send as EMAIL_FROM.
      [smtpReply("DATA", "554 5.2.0 STOREDRV.Submission.Exception:SendAsDeniedException.MapiExceptionSendAsDenied; Failed to process message due to a permanent exception", "EMESSAGE"), "sender"],
      [smtpReply("DATA", "550 5.7.60 SMTP; Client does not have permissions to send as this sender", "EMESSAGE"), "sender"],
      // A content filter, or a server that checks mailboxes only after DATA: decided conservatively.
      [smtpReply("DATA", "550 5.7.1 Message content rejected", "EMESSAGE"), "permission"],
      [smtpReply("DATA", "550 5.1.1 <bob@example.com>: user unknown", "EMESSAGE"), "permission"],
    ];
    for (const [failure, fault] of refusals) {
      expect(smtpFault(failure), failure.text).toEqual({ deploymentFault: fault });
      expect(classifyOutcome(emailAttempt(failure)), failure.text).toBe("retry");
      expect(isDestinationsFault(emailAttempt(failure)), failure.text).toBe(false);
    }
  });
});
