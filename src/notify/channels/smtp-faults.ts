// Whose failure an SMTP error is. SMTP_URL is the operator's own server (a relay or a
// submission service), so most of what it refuses is about the deployment, not about the
// recipient: our login, our sender, our account's right to relay, or the server itself being
// away or busy. Only what it says about the recipient (at RCPT TO) counts toward disabling the
// alert. Pure: a function of what nodemailer reported.
import { PERMANENT_ERROR_CODES, type DeliveryOutcome } from "../retry-policy.ts";

export type SmtpFailure = {
  /** nodemailer's error code (EAUTH, EENVELOPE, ECONNECTION…) or one of PERMANENT_ERROR_CODES. */
  errorCode: string;
  /** The server's reply code, when it replied. */
  smtpResponseCode: number | undefined;
  /** The SMTP command that failed, as nodemailer names it ("MAIL FROM", "RCPT TO", "DATA", "CONN"…). */
  command: unknown;
  /** The server's reply, or the error's message. */
  text: string;
};

/**
 * A refusal of the account rather than of the recipient, whatever the command: a relay that
 * will not relay for our login (Postfix "554 5.7.1 <bob@…>: Relay access denied", Sendmail
 * "Relaying denied", Exim "relay not permitted", Exchange "Unable to relay"), or a sandbox
 * that sends to verified addresses only (Amazon SES "Email address is not verified"). A plain
 * 5.7.1 without these words ("Recipient address rejected: Access denied") stays the recipient's.
 */
const ACCOUNT_REFUSAL_TEXT = /\brelay(?:ing)?(?: access)? (?:is )?(?:denied|not permitted|not allowed)\b|\bunable to relay\b|\bnot allowed to relay\b|\bnot verified\b/i;
/** Enhanced status codes that only ever mean our account: Office 365's 5.7.64 "TenantAttribution; Relay Access Denied". */
const ACCOUNT_REFUSAL_STATUS = /(?:^|\s)5\.7\.64(?:\s|$)/;

/** Failures without a reply that are the message's, not the server's (nodemailer refused it before sending). */
const REFUSED_BEFORE_SENDING: ReadonlySet<string> = new Set([PERMANENT_ERROR_CODES.badMessage, "EENVELOPE", "EMESSAGE"]);

/** What the failure says about the deployment and its provider, if anything. */
export function smtpFault(failure: SmtpFailure): Pick<DeliveryOutcome, "deploymentFault" | "providerUnavailable"> {
  const { errorCode, smtpResponseCode, command, text } = failure;
  // EAUTH: the server refused our login (535, 534…); 530: it wants a login we did not give.
  if (errorCode === "EAUTH" || smtpResponseCode === 530) return { deploymentFault: "credentials" };
  // ETLS: no TLS before our login (the server offers no STARTTLS, or its certificate is refused).
  if (errorCode === "ETLS") return { deploymentFault: "encryption" };
  // Only a server's reply: nodemailer's own refusals at MAIL FROM (message too large) have none.
  // The server answers MAIL FROM before it has heard of any recipient.
  if (command === "MAIL FROM" && smtpResponseCode !== undefined) return { deploymentFault: "sender" };
  if (smtpResponseCode !== undefined && (ACCOUNT_REFUSAL_STATUS.test(text) || ACCOUNT_REFUSAL_TEXT.test(text))) {
    return { deploymentFault: "permission" };
  }
  // No reply at all: the server could not be reached, or went silent (refused, reset, timed out, DNS, TLS).
  if (smtpResponseCode === undefined) return REFUSED_BEFORE_SENDING.has(errorCode) ? {} : { providerUnavailable: true };
  // 421: the server is closing the channel (going down, too busy), whatever the command.
  // Another 4xx outside RCPT TO (at the greeting, at DATA: "451 local error", "452 insufficient
  // storage") is the server's own trouble; at RCPT TO, a 4xx is about the mailbox (greylisted, full).
  if (smtpResponseCode === 421 || (smtpResponseCode >= 400 && smtpResponseCode < 500 && command !== "RCPT TO")) {
    return { providerUnavailable: true };
  }
  return {};
}
