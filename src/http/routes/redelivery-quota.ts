// How many failed notifications a caller may send again an hour (REDELIVERIES_PER_HOUR). Not the
// test quota: a redelivery resends what fired already, and an outage leaves hundreds of failed
// notifications, which a quota of 20 tests an hour would take days to resend. Still bounded: a
// notification refused again (a webhook that answers 4xx on purpose) can be redelivered again,
// and each bulk request reopens up to a thousand, so without a bound one token could aim a
// thousand POSTs per request at a URL of its choosing. One counter per caller per clock hour,
// in Redis (every API process shares it), counted in notifications, not requests.
import type { Redis } from "ioredis";
import { addToHourCount, hourOf, secondsLeftInHour } from "../../hour-count.ts";
import { TimedOut, withTimeout } from "../../with-timeout.ts";
import { ProblemError } from "../problem.ts";
import { QUOTA_TIMEOUT_MS, quotaSpent } from "./test-quota.ts";

export type RedeliveryQuota = {
  /**
   * Takes up to `wanted` redeliveries from the caller's hour; answers how many it granted (at
   * least 1), or throws 429 (none left), 403 (turned off) or 503 (Redis did not answer in time).
   */
  take: (wanted: number) => Promise<number>;
  /** Gives back what was granted and not used (a notification another request reopened first). */
  giveBack: (unused: number) => Promise<void>;
};

export const redeliveryOff = (): ProblemError => new ProblemError("forbidden", "redelivery is turned off here (REDELIVERIES_PER_HOUR=0)");

export function redeliveryQuota(redis: Redis, prefix: string, caller: string, perHour: number, now: Date): RedeliveryQuota {
  const hour = hourOf(now);
  const key = `${prefix}:redelivery-quota:${hour}:${caller}`;
  const bounded = <T>(command: () => Promise<T>) =>
    withTimeout(command, QUOTA_TIMEOUT_MS, "Redis").catch((error: unknown) => {
      if (!(error instanceof TimedOut)) throw error;
      // Unbounded, a Redis that stops answering held the request, its alert's lock and a
      // database connection for ever (as the test quota once did).
      throw new ProblemError("unavailable", `the redelivery quota could not be counted: ${error.message}; retry shortly`, {
        headers: { "retry-after": "5" },
      });
    });
  const giveBack = async (unused: number) => {
    if (unused > 0) await bounded(() => redis.decrby(key, unused));
  };
  return {
    giveBack,
    take: async (wanted) => {
      if (perHour === 0) throw redeliveryOff();
      // Counted first, then what is over the hour given back: two requests at once may each be
      // granted less than was left, never more.
      const total = await bounded(() => addToHourCount(redis, key, wanted, "the redelivery quota"));
      const granted = Math.max(0, Math.min(wanted, perHour - (total - wanted)));
      await giveBack(wanted - granted);
      if (granted > 0) return granted;
      const retryAfter = secondsLeftInHour(hour, now);
      throw quotaSpent(
        `at most ${perHour} notifications redelivered an hour per caller (REDELIVERIES_PER_HOUR); retry in ${retryAfter} s`,
        perHour,
        retryAfter,
      );
    },
  };
}
