// Whether a delivery attempt is done, worth another try, or hopeless — a plain function of
// what the peer answered, so every channel and every test agrees (DESIGN.md section 6).
// The schedule itself lives in Postgres (notifications.next_attempt_at), not in BullMQ's
// attempt counter, so a Redis flush or a killed worker never resets or loses it.

/** What one attempt produced, in the terms of the protocol that carried it. */
export type DeliveryOutcome = {
  /** HTTP status: the webhook receiver's, or Twilio's API answer. */
  statusCode?: number;
  /** A transport error code (ECONNREFUSED, UND_ERR_HEADERS_TIMEOUT, …) or one of ours below. */
  errorCode?: string;
  /** The SMTP reply code of a rejected email (451, 550, …). */
  smtpResponseCode?: number;
  /** The Retry-After header as received: seconds or an HTTP-date. */
  retryAfter?: string;
  /**
   * The channel's own provider (the SMTP server, Twilio) refused the deployment's side of the
   * message, not the recipient's: its login (`credentials`), its sender address or number
   * (`sender`), or its account's right to send there (`permission`: a relay that does not
   * relay for our login, a sandbox that sends to verified addresses only, a Twilio trial
   * account). The operator can fix it, and nothing about the recipient was judged. (Twilio's
   * Geo Permissions are not one: the operator chose not to serve that country, sms.ts.)
   */
  deploymentFault?: DeploymentFault;
  /**
   * The channel's own provider could not take the message now: our SMTP server or Twilio
   * unreachable, timed out, busy (SMTP 421, Twilio 429) or failing (Twilio 5xx). Retried like
   * any such failure, but it says nothing about the recipient either.
   */
  providerUnavailable?: boolean;
};

/**
 * What of the deployment's own a provider refused (see DeliveryOutcome.deploymentFault);
 * `unconfigured`: the channel has no provider at all (no SMTP_URL, no TWILIO_*, and no opt-in to
 * the outbox or the log), so nothing was tried.
 */
export type DeploymentFault = "credentials" | "sender" | "permission" | "encryption" | "unconfigured";

export type Verdict = "delivered" | "retry" | "permanent";

/** Our own error codes for outcomes that no amount of waiting will change. */
export const PERMANENT_ERROR_CODES = {
  /** Every resolved address of the webhook host is refused (SSRF guard at connect time). */
  addressRefused: "ADDRESS_REFUSED",
  /** The destination cannot be used: a webhook URL (bad URL, http where only https is allowed), an SMS number not texted. */
  badDestination: "BAD_DESTINATION",
  /** The message itself was refused before sending (no recipient, malformed message). */
  badMessage: "BAD_MESSAGE",
  /** Not sent: its alert owner's SMS for this clock hour are spent (SMS_PER_CALLER_PER_HOUR, sms-budget.ts). */
  smsBudgetSpent: "SMS_BUDGET_SPENT",
  /** Not sent: its alert owner's emails for this clock hour are spent (EMAIL_PER_CALLER_PER_HOUR, email-budget.ts). */
  emailBudgetSpent: "EMAIL_BUDGET_SPENT",
} as const;
/** A notification held back by its owner's hourly budget of its channel (channel-budget.ts): never tried. */
const BUDGET_SPENT_CODES: ReadonlySet<string> = new Set([PERMANENT_ERROR_CODES.smsBudgetSpent, PERMANENT_ERROR_CODES.emailBudgetSpent]);
const PERMANENT_CODES: ReadonlySet<string> = new Set(Object.values(PERMANENT_ERROR_CODES));

/** HTTP statuses that say "not now" rather than "never". */
const RETRYABLE_STATUSES: ReadonlySet<number> = new Set([408, 425, 429]);

export function classifyOutcome(outcome: DeliveryOutcome): Verdict {
  const { statusCode, errorCode, smtpResponseCode } = outcome;
  // Retried although the status says "never" (SMTP 535 or 553 at MAIL FROM, Twilio 401 or
  // 21606): the same message goes through once the operator fixes the login or the sender,
  // so failing it would lose it.
  if (outcome.deploymentFault) return "retry";
  if (statusCode !== undefined) {
    if (statusCode >= 200 && statusCode < 300) return "delivered";
    if (RETRYABLE_STATUSES.has(statusCode) || statusCode >= 500) return "retry";
    // 1xx/3xx (redirects are not followed) and every other 4xx: the receiver said no.
    return "permanent";
  }
  if (smtpResponseCode !== undefined) {
    if (smtpResponseCode >= 200 && smtpResponseCode < 400) return "delivered";
    if (smtpResponseCode >= 400 && smtpResponseCode < 500) return "retry";
    return "permanent";
  }
  if (errorCode !== undefined) return PERMANENT_CODES.has(errorCode) ? "permanent" : "retry";
  // Accepted without a reply code: the local outbox file or the SMS log line.
  return "delivered";
}

/**
 * Whether a failure is the destination's, and so counts toward disabling its alert
 * (alert-health.ts). A failure of the deployment's own (refused login, sender or permission)
 * or of its provider (SMTP server or Twilio down, busy, failing) is not: an owner cannot fix
 * it, and an outage of ours would otherwise disable every email and SMS alert it outlasted.
 * Nor is an SMS or an email held back because its owner's hourly budget was spent: the
 * destination was never tried, and a burst of the owner's other alerts would disable this one.
 */
export function isDestinationsFault(outcome: DeliveryOutcome): boolean {
  return (
    outcome.deploymentFault === undefined &&
    outcome.providerUnavailable !== true &&
    (outcome.errorCode === undefined || !BUDGET_SPENT_CODES.has(outcome.errorCode))
  );
}

/**
 * How a failed attempt reaches the operator's log (README, Notifications and Monitoring).
 * `error`, each attempt: the provider refused the deployment's own set-up (a login, a sender,
 * a relay right; any SMTP 5xx outside RCPT TO), which only an operator's change of a setting
 * ends, and meanwhile every message on the channel waits, as for a refused DATABASE_URL.
 * `warn`, once a minute: the provider is away or busy, which passes without anyone. Nothing for
 * the destination's own failures: a receiver down for an hour would fill the log (its
 * notification's attempts and the attempt counter say them).
 */
export function attemptLogLevel(outcome: DeliveryOutcome): "error" | "warn" | undefined {
  if (outcome.deploymentFault) return "error";
  return outcome.providerUnavailable ? "warn" : undefined;
}

/** A 410 Gone from a webhook receiver: the endpoint is retired, so the alert is disabled at once. */
export function marksAlertGone(outcome: DeliveryOutcome): boolean {
  return outcome.statusCode === 410;
}

/** Bounds on a receiver's Retry-After: at least 1 s (no hot loop on "0"), at most 24 h. */
export const RETRY_AFTER_MIN_MS = 1_000;
export const RETRY_AFTER_MAX_MS = 24 * 3_600_000;
/** Each scheduled delay is spread by ±20 % so that a receiver that comes back is not stampeded. */
export const JITTER = 0.2;

/**
 * Retry-After as milliseconds from `nowMs`: delta-seconds ("120") or an HTTP-date
 * ("Wed, 21 Oct 2015 07:28:00 GMT"); undefined when absent or unreadable. Not clamped.
 */
export function parseRetryAfterMs(value: string | undefined, nowMs: number): number | undefined {
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1_000;
  if (!/[a-z]/i.test(trimmed)) return undefined; // "1.5", "-3": neither form
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs);
}

/**
 * The wait before the next attempt, or null when the schedule is exhausted (→ failed).
 * `attemptsMade` counts the attempts already made (1 after the first try); the scheduled
 * delay gets ±20 % jitter from `random` (0 ≤ r < 1); a Retry-After, clamped to
 * [1 s, 24 h], is a lower bound on the wait, never a reason to try more often or more times.
 */
export function nextDelayMs(
  attemptsMade: number,
  scheduleMs: readonly number[],
  random: () => number,
  retryAfterMs?: number,
): number | null {
  const scheduled = scheduleMs[attemptsMade - 1];
  if (attemptsMade < 1 || scheduled === undefined) return null;
  return spreadDelay(scheduled, random, retryAfterMs);
}

/**
 * A scheduled wait with its ±20 % jitter (`random`: 0 ≤ r < 1), and a Retry-After, clamped to
 * [1 s, 24 h], as its lower bound: so that the notifications a receiver or provider comes back
 * to are not all sent at once, and never sooner than it asked.
 */
export function spreadDelay(scheduledMs: number, random: () => number, retryAfterMs?: number): number {
  const jittered = Math.round(scheduledMs * (1 - JITTER + 2 * JITTER * random()));
  if (retryAfterMs === undefined) return jittered;
  const asked = Math.min(RETRY_AFTER_MAX_MS, Math.max(RETRY_AFTER_MIN_MS, retryAfterMs));
  return Math.max(jittered, asked);
}
