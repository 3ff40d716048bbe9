// Whose a given-up notification is, for the operator's alerts: a receiver, mailbox or number that
// refused or kept failing is its owner's to fix, and paging the operator at night for it helps
// no one; our own provider set-up or outage, which the owner cannot fix, is the operator's.
// Decided from the attempt that gave up, as isDestinationsFault (retry-policy.ts) decides what
// counts toward disabling an alert: the two agree on what is the destination's.
import { PERMANENT_ERROR_CODES, type DeliveryOutcome } from "./retry-policy.ts";

/**
 * `destination`: the receiver, mailbox or number refused (a webhook 4xx, a mailbox refused at
 * RCPT TO, a number not texted, an address the SSRF guard refuses), or kept failing until the
 * schedule ran out (5xx, timeouts, refused connections); its owner's to fix.
 * `deployment`: the provider refused our own set-up (login, sender, relay rights, encryption)
 * or the channel has none, until the schedule ran out; the operator's.
 * `provider`: our SMTP server or Twilio could not take messages until the schedule ran out; the
 * operator's.
 * `sms_budget`: not sent because its alert's owner had used up SMS_PER_CALLER_PER_HOUR.
 * `email_budget`: not sent because its alert's owner had used up EMAIL_PER_CALLER_PER_HOUR.
 */
export type GiveUpCause = "destination" | "deployment" | "provider" | "sms_budget" | "email_budget";
export const GIVE_UP_CAUSES: readonly GiveUpCause[] = ["destination", "deployment", "provider", "sms_budget", "email_budget"];

/** Each channel budget's refusal (channel-budget.ts), and the cause it is given up with. */
const BUDGET_CAUSES: ReadonlyMap<string, GiveUpCause> = new Map<string, GiveUpCause>([
  [PERMANENT_ERROR_CODES.smsBudgetSpent, "sms_budget"],
  [PERMANENT_ERROR_CODES.emailBudgetSpent, "email_budget"],
]);

/** Why the attempt that failed a notification for good failed it. */
export function giveUpCause(outcome: DeliveryOutcome): GiveUpCause {
  if (outcome.deploymentFault !== undefined) return "deployment";
  if (outcome.providerUnavailable === true) return "provider";
  return (outcome.errorCode === undefined ? undefined : BUDGET_CAUSES.get(outcome.errorCode)) ?? "destination";
}
