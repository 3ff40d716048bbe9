// How many SMS one caller's alerts may send a clock hour (SMS_PER_CALLER_PER_HOUR). Firings are
// not capped, the operator pays for every SMS, and anyone can make a public address fire by
// sending it dust: one token's 50 SMS alerts on each of 200 such addresses sent 10,000 texts
// per transaction that cost its sender a fraction of a cent. One counter per alert owner per
// clock hour in Redis, shared by every worker (as the test and redelivery quotas are); losing
// it (a Redis flush) only starts the hour afresh.
//
// A notification counts once, when its first attempt is about to be made: its retries (Twilio
// busy or away) are the same message, and Twilio bills only the one it takes. A redelivery
// sends it again, and counts again. Over the budget it is not sent: its attempt says why, it
// fails without counting against its alert, and its owner can redeliver it once the hour turns.
import type { Redis } from "ioredis";
import { addToHourCount, hourOf } from "../hour-count.ts";
import { createRepeatGate, REPEAT_LOG_WINDOW_MS } from "../log-repeats.ts";
import type { Logger } from "../logger.ts";
import { withTimeout } from "../with-timeout.ts";
import type { AttemptResult } from "./channels/index.ts";
import { PERMANENT_ERROR_CODES } from "./retry-policy.ts";

const HOUR_MS = 3_600_000;
/** How long the count may take; a Redis that does not answer fails the run, which BullMQ retries. */
const COUNT_TIMEOUT_MS = 2_000;

export type SmsBudgetDeps = {
  redis: Redis;
  /** QUEUE_PREFIX: the counters live beside the queues. */
  prefix: string;
  perHour: number;
  logger: Logger;
  /** Told of each SMS held back (wallet_alerts_sms_budget_refusals_total). */
  onSpent?: () => void;
};

/** What of a notification the budget needs: whose it is, and whether this is its first attempt. */
export type BudgetedSms = { notificationId: string; owner: string; attemptCount: number };

/**
 * Counts the SMS about to be sent against its owner's hour: undefined when it may go, or the
 * attempt that says it was not sent (permanent, and not the destination's fault: retry-policy.ts).
 */
export function createSmsBudget(deps: SmsBudgetDeps): (sms: BudgetedSms, at: Date) => Promise<AttemptResult | undefined> {
  // Once a minute per caller: a caller over its budget may have thousands more SMS owed.
  const gate = createRepeatGate(REPEAT_LOG_WINDOW_MS);
  return async (sms, at) => {
    if (sms.attemptCount > 0) return undefined;
    const hour = hourOf(at);
    const key = `${deps.prefix}:sms-budget:${hour}:${sms.owner}`;
    const taken = await withTimeout(() => addToHourCount(deps.redis, key, 1, "the SMS budget"), COUNT_TIMEOUT_MS, "Redis");
    if (taken <= deps.perHour) return undefined;

    deps.onSpent?.();
    const nextHour = new Date((hour + 1) * HOUR_MS).toISOString();
    const fields = { owner: sms.owner, smsPerCallerPerHour: deps.perHour, notificationId: sms.notificationId, until: nextHour };
    const { log, suppressed } = gate(sms.owner);
    if (log) {
      deps.logger.warn(
        { ...fields, ...(suppressed > 0 ? { repeatsNotLogged: suppressed } : {}) },
        `${WARNING}: its further SMS notifications this hour fail without being sent; its owner can redeliver them once the hour ends`,
      );
    } else {
      deps.logger.debug(fields, `${WARNING} (repeated)`);
    }
    return {
      errorCode: PERMANENT_ERROR_CODES.smsBudgetSpent,
      error:
        `not sent: its alert owner has used up this hour's SMS (${deps.perHour} an hour per caller, SMS_PER_CALLER_PER_HOUR); ` +
        `its owner can send it again from ${nextHour} with POST /v1/notifications/${sms.notificationId}/redeliver`,
      durationMs: 0,
    };
  };
}

const WARNING = "a caller has used up its SMS for this clock hour (SMS_PER_CALLER_PER_HOUR)";
