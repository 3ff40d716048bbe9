// What the delivery processor reports for the worker's /metrics. Attempts by channel and
// outcome, counted as they happen, not from the notifications table at scrape time: that
// table only grows, and counting its delivered rows on every scrape got slower with every
// notification ever sent. And the duration of a run that ends with the job parked for its next
// attempt, which only the processor knows of (see job-metrics.ts).
import { Counter, type Registry } from "prom-client";
import { NOTIFICATION_METHODS, type NotificationMethod } from "../domain/types.ts";
import type { BudgetedChannel } from "../notify/channel-budget.ts";
import { GIVE_UP_CAUSES, type GiveUpCause } from "../notify/give-up-cause.ts";
import type { JobDurations, JobRun } from "./job-metrics.ts";
import { METRIC_PREFIX } from "./registry.ts";

/**
 * What an attempt came to: sent, to be tried again later, or given up; `not_sent`: taken by a
 * fallback the operator opted into (EMAIL_TRANSPORT=outbox, SMS_TRANSPORT=log), so that a file or
 * a log line that reaches nobody is never counted as delivered.
 */
export type AttemptOutcome = "delivered" | "not_sent" | "retrying" | "failed";
const OUTCOMES: readonly AttemptOutcome[] = ["delivered", "not_sent", "retrying", "failed"];

export type DeliveryMetrics = {
  attempted: (channel: NotificationMethod, outcome: AttemptOutcome) => void;
  /** A notification given up for good after an attempt (each also an attempt `failed`), and whose that is. */
  gaveUp: (channel: NotificationMethod, cause: GiveUpCause) => void;
  /** A run whose attempt failed and whose job now waits in the delayed set for the next one (no BullMQ event says so). */
  parkedForRetry: (job: JobRun) => void;
  /** An SMS or email not sent because its alert owner's hourly budget was spent (SMS_PER_CALLER_PER_HOUR, EMAIL_PER_CALLER_PER_HOUR). */
  budgetSpent: (channel: BudgetedChannel) => void;
  /** An attempt our own provider could not take (the SMTP server or Twilio unreachable, busy or failing). */
  providerUnavailable: (channel: NotificationMethod) => void;
};

/** `durations`: the worker's job metrics (createJobMetrics on the same registry). */
export function createDeliveryMetrics(registry: Registry, durations: Pick<JobDurations, "observeRun">): DeliveryMetrics {
  const attempts = new Counter({
    name: `${METRIC_PREFIX}delivery_attempts_total`,
    help: "Delivery attempts this worker recorded, by channel (email, webhook, sms) and outcome (delivered; not_sent: written to the outbox or the log, EMAIL_TRANSPORT=outbox or SMS_TRANSPORT=log; retrying: failed, tried again later; failed: given up).",
    labelNames: ["channel", "outcome"],
    registers: [registry],
  });
  // Every pair from the start (0), so rate() and alerts see a series before the first attempt.
  for (const channel of NOTIFICATION_METHODS) for (const outcome of OUTCOMES) attempts.inc({ channel, outcome }, 0);
  // Beside the attempts' outcomes, which page the operator alike for a customer's broken receiver
  // and for our own provider refusing our login: the rules page on the operator's causes only.
  const givenUp = new Counter({
    name: `${METRIC_PREFIX}deliveries_given_up_total`,
    help: "Notifications this worker gave up for good after an attempt (each also counts as a failed attempt), by channel and cause (destination: the receiver, mailbox or number refused, or kept failing until the retry schedule ran out; deployment: our provider refused our own login, sender or account, or the channel has no provider, until the schedule ran out; provider: our SMTP server or Twilio could not take messages until the schedule ran out; sms_budget: SMS_PER_CALLER_PER_HOUR spent; email_budget: EMAIL_PER_CALLER_PER_HOUR spent).",
    labelNames: ["channel", "cause"],
    registers: [registry],
  });
  for (const channel of NOTIFICATION_METHODS) for (const cause of GIVE_UP_CAUSES) givenUp.inc({ channel, cause }, 0);
  // No label per caller: callers are unbounded; the worker's warn line names them.
  const overBudget: Readonly<Record<BudgetedChannel, Counter>> = {
    sms: new Counter({
      name: `${METRIC_PREFIX}sms_budget_refusals_total`,
      help: "SMS notifications this worker failed without sending because their alert owner had used up SMS_PER_CALLER_PER_HOUR for the clock hour (each also counts as a failed sms attempt; its owner can redeliver it).",
      registers: [registry],
    }),
    email: new Counter({
      name: `${METRIC_PREFIX}email_budget_refusals_total`,
      help: "Email notifications this worker failed without sending because their alert owner had used up EMAIL_PER_CALLER_PER_HOUR for the clock hour (each also counts as a failed email attempt; its owner can redeliver it).",
      registers: [registry],
    }),
  };
  // Apart from the attempts' outcomes, which cannot tell our provider's outage from a recipient's
  // trouble: an outage keeps a few notifications retrying, too few for any count of them to show.
  const providerDown = new Counter({
    name: `${METRIC_PREFIX}delivery_provider_unavailable_total`,
    help: "Delivery attempts this worker made that our own provider could not take (the SMTP server or Twilio unreachable, busy or failing; each also counts as a retrying or failed attempt), by channel. Retried every 30 s while it lasts.",
    labelNames: ["channel"],
    registers: [registry],
  });
  for (const channel of NOTIFICATION_METHODS) providerDown.inc({ channel }, 0);
  return {
    attempted: (channel, outcome) => attempts.inc({ channel, outcome }),
    gaveUp: (channel, cause) => givenUp.inc({ channel, cause }),
    providerUnavailable: (channel) => providerDown.inc({ channel }),
    parkedForRetry: (job) => durations.observeRun(job, "retrying"),
    budgetSpent: (channel) => overBudget[channel].inc(),
  };
}
