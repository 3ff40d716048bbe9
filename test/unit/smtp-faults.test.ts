import { describe, expect, it } from "vitest";
import { smtpFault, type SmtpFailure } from "../../src/notify/channels/smtp-faults.ts";

/** A refusal as nodemailer reports a server's reply: the code, the command it answered, the reply. */
const reply = (command: string, text: string): SmtpFailure => ({
  errorCode: command === "DATA" ? "EMESSAGE" : "EENVELOPE",
  smtpResponseCode: Number(text.slice(0, 3)),
  command,
  text,
});

/** No reply at all: nodemailer's error code only. */
const silence = (errorCode: string): SmtpFailure => ({ errorCode, smtpResponseCode: undefined, command: "CONN", text: "connect ECONNREFUSED" });

describe("whose fault an SMTP failure is", () => {
  it("counts a relay's refusal to relay for the service's login, or a sandbox's unverified address, as the deployment's, whatever the command", () => {
    const refusals = [
      reply("RCPT TO", "554 5.7.1 <bob@example.com>: Relay access denied"), // Postfix
      reply("RCPT TO", "550 5.7.64 TenantAttribution; Relay Access Denied [AM6PR0502MB3895.eurprd05.prod.outlook.com]"), // Office 365
      reply("RCPT TO", "550 5.7.1 <bob@example.com>... Relaying denied"), // Sendmail
      reply("RCPT TO", "550 relay not permitted"), // Exim
      reply("RCPT TO", "550 5.7.54 SMTP; Unable to relay recipient in non-accepted domain"), // Exchange
      reply("DATA", "554 Message rejected: Email address is not verified. The following identities failed the check in region US-EAST-1: bob@example.com"), // SES sandbox
    ];
    for (const refusal of refusals) expect(smtpFault(refusal), refusal.text).toEqual({ deploymentFault: "permission" });
  });

  it("keeps a refusal of the mailbox at RCPT TO the recipient's, a 5.7.1 without relay words included", () => {
    for (const text of ["550 5.1.1 <bob@example.com>: Recipient address rejected: User unknown", "554 5.7.1 <bob@example.com>: Recipient address rejected: Access denied", "452 4.2.2 Mailbox full", "451 4.7.1 Greylisted, try again later"]) {
      expect(smtpFault(reply("RCPT TO", text)), text).toEqual({});
    }
  });

  it("counts a refused login and a refused sender as the deployment's, as before", () => {
    expect(smtpFault({ errorCode: "EAUTH", smtpResponseCode: 535, command: "AUTH PLAIN", text: "535 5.7.8 Authentication failed" })).toEqual({ deploymentFault: "credentials" });
    expect(smtpFault(reply("MAIL FROM", "530 5.7.0 Authentication required"))).toEqual({ deploymentFault: "credentials" });
    expect(smtpFault(reply("MAIL FROM", "553 5.7.1 Sender address rejected: not owned by user"))).toEqual({ deploymentFault: "sender" });
  });

  it("counts a server that gives the service's login no encryption (no STARTTLS, a refused certificate) as the deployment's", () => {
    expect(smtpFault({ errorCode: "ETLS", smtpResponseCode: 500, command: "STARTTLS", text: "Error upgrading connection with STARTTLS: 500 Error: command not recognized" })).toEqual({ deploymentFault: "encryption" });
    expect(smtpFault(silence("ETLS"))).toEqual({ deploymentFault: "encryption" });
  });

  it("counts an SMTP server that cannot be reached or goes silent as the provider's", () => {
    for (const code of ["ECONNECTION", "ETIMEDOUT", "ESOCKET", "EDNS"]) expect(smtpFault(silence(code)), code).toEqual({ providerUnavailable: true });
    // Refused by nodemailer before sending: the message's, not the server's.
    expect(smtpFault(silence("BAD_MESSAGE"))).toEqual({});
  });

  it("counts 421 and a 4xx outside RCPT TO as the server's own trouble, a 4xx at RCPT TO as the mailbox's", () => {
    expect(smtpFault({ errorCode: "EPROTOCOL", smtpResponseCode: 421, command: "CONN", text: "421 4.3.2 Service shutting down" })).toEqual({ providerUnavailable: true });
    expect(smtpFault(reply("RCPT TO", "421 4.7.0 Too many connections, closing channel"))).toEqual({ providerUnavailable: true });
    expect(smtpFault(reply("DATA", "451 4.3.0 Error: queue file write error"))).toEqual({ providerUnavailable: true });
    expect(smtpFault(reply("RCPT TO", "450 4.2.1 Mailbox temporarily unavailable"))).toEqual({});
  });
});
