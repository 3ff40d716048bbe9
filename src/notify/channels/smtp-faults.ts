// Whose failure an SMTP error is. SMTP_URL is the operator's own server (a relay or a
// submission service), so most of what it refuses is about the deployment, not about the
// recipient: our login, our sender, our account's right to relay, or the server itself being
// away or busy. Only what it says about the recipient counts toward disabling the alert, and
// it says that only in its reply to RCPT TO: a reply at any other step (the greeting, EHLO,
// AUTH, MAIL FROM, DATA and its end) is never the recipient's. Nor is a reply at RCPT TO in
// words that name our own set-up: Postfix holds its client, HELO and sender restrictions back
// until RCPT TO (smtpd_delay_reject = yes, the default), so its refusal of our sender arrives
// as the answer to RCPT TO. Pure: a function of what nodemailer reported.
import { PERMANENT_ERROR_CODES, type DeliveryOutcome, type DeploymentFault } from "../retry-policy.ts";

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
 * A login the server wants and did not get, whatever the command: "530 5.7.0 Authentication
 * required" at any step (Sendmail, Exim, Gmail; 530 alone is caught by its code), Office 365's
 * "5.7.57 Client not authenticated to send mail", and Postfix's reject_sender_login_mismatch
 * for a client that did not log in ("553 5.7.1 <alerts@…>: Sender address rejected: not logged in").
 */
const LOGIN_REQUIRED_TEXT = /\bauthentication (?:is )?required\b|\bSender address rejected: not logged in\b/i;
const LOGIN_REQUIRED_STATUS = /(?:^|\s)5\.7\.57(?:\s|$)/;

/**
 * A refusal of our sender address (EMAIL_FROM), whatever the command. Postfix, at RCPT TO by
 * default: "553 5.7.1 <alerts@…>: Sender address rejected: not owned by user alerts"
 * (reject_sender_login_mismatch), "554 5.7.1 <alerts@…>: Sender address rejected: Access
 * denied" (check_sender_access), "450 4.1.8 <alerts@…>: Sender address rejected: Domain not
 * found" (reject_unknown_sender_domain), "Sender address [alerts@…] blocked using …"
 * (reject_rhsbl_sender). Office 365, at the end of DATA: "554 5.2.0
 * STOREDRV.Submission.Exception:SendAsDeniedException…" and "5.7.60 … Client does not have
 * permissions to send as this sender": the login may not send as EMAIL_FROM.
 */
const SENDER_REFUSAL_TEXT = /\bSender address (?:rejected\b|\[[^\]]*\] blocked using\b)|SendAsDenied/i;
const SENDER_REFUSAL_STATUS = /(?:^|\s)5\.7\.60(?:\s|$)/;

/**
 * A refusal of this worker as a client, whatever the command. Postfix, at RCPT TO by default:
 * "554 5.7.1 <unknown[203.0.113.9]>: Client host rejected: Access denied" (check_client_access,
 * or "permit_sasl_authenticated, reject" without our login), "450 4.7.1 Client host rejected:
 * cannot find your hostname" (reject_unknown_client_hostname), "554 5.7.1 Service unavailable;
 * Client host [203.0.113.9] blocked using zen.spamhaus.org" (reject_rbl_client), and of the
 * name the worker gives in EHLO: "504 5.5.2 <a1b2c3>: Helo command rejected: need
 * fully-qualified hostname" (reject_non_fqdn_helo_hostname; nodemailer says the machine's
 * host name unless SMTP_URL ends in `?name=<a full host name>`).
 */
const CLIENT_REFUSAL_TEXT = /\b(?:Client host|Helo command) (?:rejected\b|\[[^\]]*\] blocked using\b)/i;

/**
 * A refusal of the account rather than of the recipient, whatever the command: a relay that
 * will not relay for our login (Postfix "554 5.7.1 <bob@…>: Relay access denied", also as
 * 5.7.0 or 454 4.7.1, Sendmail "Relaying denied", Exim "relay not permitted", Exchange
 * "Unable to relay"), or a sandbox that sends to verified addresses only (Amazon SES "Email
 * address is not verified"). A plain 5.7.1 without these words ("Recipient address rejected:
 * Access denied") stays the recipient's.
 *
 * "Relay access denied" names the recipient's address, but it is decided as the account's:
 * SMTP_URL is the operator's own outgoing server, which relays anywhere for a client it
 * trusts, so the refusal says that it does not trust this login or address (no login, a
 * wrong one, a network not in mynetworks). The cost of that choice: a relay that relays to a
 * few domains only, on purpose, refuses an alert's address outside them every time, and the
 * alert is retried to the end of its schedule (logged at error each time) and never disabled.
 */
const ACCOUNT_REFUSAL_TEXT = /\brelay(?:ing)?(?: access)? (?:is )?(?:denied|not permitted|not allowed)\b|\bunable to relay\b|\bnot allowed to relay\b|\bnot verified\b/i;
/** Enhanced status codes that only ever mean our account: Office 365's 5.7.64 "TenantAttribution; Relay Access Denied". */
const ACCOUNT_REFUSAL_STATUS = /(?:^|\s)5\.7\.64(?:\s|$)/;

/** Failures without a reply that are the message's, not the server's (nodemailer refused it before sending). */
const REFUSED_BEFORE_SENDING: ReadonlySet<string> = new Set([PERMANENT_ERROR_CODES.badMessage, "EENVELOPE", "EMESSAGE"]);

/** What of the deployment's own a reply names in its words, whatever the command it answers. */
function namedRefusal(text: string): DeploymentFault | undefined {
  if (LOGIN_REQUIRED_TEXT.test(text) || LOGIN_REQUIRED_STATUS.test(text)) return "credentials";
  if (SENDER_REFUSAL_TEXT.test(text) || SENDER_REFUSAL_STATUS.test(text)) return "sender";
  if (CLIENT_REFUSAL_TEXT.test(text) || ACCOUNT_REFUSAL_TEXT.test(text) || ACCOUNT_REFUSAL_STATUS.test(text)) return "permission";
  return undefined;
}

/** What the failure says about the deployment and its provider, if anything. */
export function smtpFault(failure: SmtpFailure): Pick<DeliveryOutcome, "deploymentFault" | "providerUnavailable"> {
  const { errorCode, smtpResponseCode, command, text } = failure;
  // EAUTH: the server refused our login (535, 534…); 530: it wants a login we did not give.
  if (errorCode === "EAUTH" || smtpResponseCode === 530) return { deploymentFault: "credentials" };
  // ETLS: no TLS before our login (the server offers no STARTTLS, or its certificate is refused).
  if (errorCode === "ETLS") return { deploymentFault: "encryption" };
  // No reply at all: the server could not be reached, or went silent (refused, reset, timed out, DNS, TLS).
  if (smtpResponseCode === undefined) return REFUSED_BEFORE_SENDING.has(errorCode) ? {} : { providerUnavailable: true };
  // A reply in words that name our login, sender, client or account: ours, at RCPT TO too.
  const named = namedRefusal(text);
  if (named) return { deploymentFault: named };
  // 421: the server is closing the channel (going down, too busy), whatever the command.
  // Another 4xx outside RCPT TO (at the greeting, at MAIL FROM or DATA: "451 local error", "452
  // insufficient storage") is the server's own trouble; at RCPT TO, a 4xx is about the mailbox
  // (greylisted, full). Until 2026-11-27 one at MAIL FROM was taken for a refused sender, and
  // logged at error naming EMAIL_FROM for a server that was only busy.
  if (smtpResponseCode === 421 || (smtpResponseCode >= 400 && smtpResponseCode < 500 && command !== "RCPT TO")) {
    return { providerUnavailable: true };
  }
  // Only a server's reply: nodemailer's own refusals at MAIL FROM (message too large) have none.
  // The server answers MAIL FROM before it has heard of any recipient.
  if (command === "MAIL FROM") return { deploymentFault: "sender" };
  // A 5xx anywhere but RCPT TO refuses the deployment, not the mailbox: a greeting or EHLO
  // reply refusing this worker, or the end of DATA refusing our account or what we send
  // (Amazon SES "554 Message rejected: Sending paused for this account", a content filter).
  // Retried on the schedule and never counted, even a rare one that does name the mailbox
  // there (a server that checks recipients only after DATA): no reply at that step can be
  // told apart from one about our account with any confidence, and counting the wrong one
  // disables every email alert.
  if (smtpResponseCode >= 500 && command !== "RCPT TO") return { deploymentFault: "permission" };
  return {};
}
