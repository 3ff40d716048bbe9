// How many notifications of one channel one caller's alerts may send a clock hour: the SMS
// budget (sms-budget.ts) and the email budget (email-budget.ts), each for its own reason, with
// one way of counting. One counter per channel, alert owner and clock hour in Redis, shared by
// every worker (as the test and redelivery quotas are); losing it (a Redis flush) only starts
// the hour afresh.
//
// A notification counts once, when its first attempt is about to be made: its retries (the
// provider busy or away) are the same message, which the provider takes only once. A
// redelivery sends it again (its attempt count starts afresh), and counts again. Over the
// budget it is not sent: its attempt says why, it fails without counting against its alert,
// and its owner can redeliver it once the hour turns.
import type { Redis } from "ioredis";
import type { NotificationMethod } from "../domain/types.ts";
import { addToHourCount, hourOf } from "../hour-count.ts";
import { createRepeatGate, REPEAT_LOG_WINDOW_MS } from "../log-repeats.ts";
import type { Logger } from "../logger.ts";
import { withTimeout } from "../with-timeout.ts";
import type { AttemptResult } from "./channels/index.ts";

const HOUR_MS = 3_600_000;
/** How long the count may take; a Redis that does not answer fails the run, which BullMQ retries. */
const COUNT_TIMEOUT_MS = 2_000;

/** The channels with a budget. Webhooks have none: the receiver is the caller's own, and costs the operator nothing. */
export type BudgetedChannel = Exclude<NotificationMethod, "webhook">;

/** What tells one channel's budget from another's, in its log lines, its refusal and its Redis key. */
export type BudgetTerms = {
  /** The setting, named wherever the budget is (SMS_PER_CALLER_PER_HOUR). */
  setting: string;
  /** The log lines' field for the budget: the setting's name in the config (smsPerCallerPerHour). */
  field: string;
  /** The Redis key's kind, between QUEUE_PREFIX and the hour (sms-budget). */
  key: string;
  /** The channel's messages, as in "this hour's SMS", "this hour's emails". */
  messages: string;
  /** One notification's kind, as in "its further SMS notifications", "the email budget". */
  kind: string;
  /** The held-back attempt's code (retry-policy.ts PERMANENT_ERROR_CODES): permanent, not the destination's fault, its own give-up cause. */
  errorCode: string;
};

export type ChannelBudgetDeps = {
  redis: Redis;
  /** QUEUE_PREFIX: the counters live beside the queues. */
  prefix: string;
  perHour: number;
  logger: Logger;
  /** Told of each notification held back (its channel's budget refusals counter). */
  onSpent?: () => void;
};

/** What of a notification the budget needs: whose it is, and whether this is its first attempt. */
export type BudgetedNotification = { notificationId: string; owner: string; attemptCount: number };

/**
 * Counts the notification about to be sent against its owner's hour: undefined when it may go,
 * or the attempt that says it was not sent.
 */
export function createChannelBudget(
  deps: ChannelBudgetDeps,
  terms: BudgetTerms,
): (notification: BudgetedNotification, at: Date) => Promise<AttemptResult | undefined> {
  // Once a minute per caller: a caller over its budget may have thousands more notifications owed.
  const gate = createRepeatGate(REPEAT_LOG_WINDOW_MS);
  const warning = `a caller has used up its ${terms.messages} for this clock hour (${terms.setting})`;
  return async (notification, at) => {
    if (notification.attemptCount > 0) return undefined;
    const hour = hourOf(at);
    const key = `${deps.prefix}:${terms.key}:${hour}:${notification.owner}`;
    const taken = await withTimeout(() => addToHourCount(deps.redis, key, 1, `the ${terms.kind} budget`), COUNT_TIMEOUT_MS, "Redis");
    if (taken <= deps.perHour) return undefined;

    deps.onSpent?.();
    const nextHour = new Date((hour + 1) * HOUR_MS).toISOString();
    const fields = { owner: notification.owner, [terms.field]: deps.perHour, notificationId: notification.notificationId, until: nextHour };
    const { log, suppressed } = gate(notification.owner);
    if (log) {
      deps.logger.warn(
        { ...fields, ...(suppressed > 0 ? { repeatsNotLogged: suppressed } : {}) },
        `${warning}: its further ${terms.kind} notifications this hour fail without being sent; its owner can redeliver them once the hour ends`,
      );
    } else {
      deps.logger.debug(fields, `${warning} (repeated)`);
    }
    return {
      errorCode: terms.errorCode,
      error:
        `not sent: its alert owner has used up this hour's ${terms.messages} (${deps.perHour} an hour per caller, ${terms.setting}); ` +
        `its owner can send it again from ${nextHour} with POST /v1/notifications/${notification.notificationId}/redeliver`,
      durationMs: 0,
    };
  };
}
