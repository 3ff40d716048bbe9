// How many risk_alert.test notifications a caller may send an hour. A test goes out at once
// to whatever destination the caller gave (recipients are not confirmed), with text that
// includes the caller's own wallet alias: without a quota, a token with alerts:write could
// send SMS and email to anyone, as fast as the API rate limit allows, from the operator's
// number and domain and at its cost. One counter per caller per clock hour, in Redis, so
// every API process shares it; losing it (a Redis flush) only resets the hour.
import type { Redis } from "ioredis";
import { addToHourCount, hourOf, secondsLeftInHour } from "../../hour-count.ts";
import { TimedOut, withTimeout } from "../../with-timeout.ts";
import { ProblemError } from "../problem.ts";

/** The window of an hourly quota (this one, the redelivery quota): a 429 of one says to wait up to this long. */
export const QUOTA_HOUR_SECONDS = 3600;
/** How long the count may take; it is taken under the alert's row lock (routes/notifications.ts). */
export const QUOTA_TIMEOUT_MS = 2_000;

/** Takes one test from the caller's hourly quota, or throws a 429 that says when the next hour starts. */
export async function takeTestQuota(redis: Redis, prefix: string, caller: string, perHour: number, now: Date): Promise<void> {
  const hour = hourOf(now);
  const key = `${prefix}:test-quota:${hour}:${caller}`;
  if (perHour === 0) throw new ProblemError("forbidden", "test notifications are turned off here (TEST_NOTIFICATIONS_PER_HOUR=0)");
  let taken: number;
  try {
    taken = await withTimeout(() => addToHourCount(redis, key, 1, "the test quota"), QUOTA_TIMEOUT_MS, "Redis");
  } catch (error) {
    if (!(error instanceof TimedOut)) throw error;
    // A Redis that stops answering raises no error: unbounded, this request waited for ever,
    // holding its alert's row lock and a database connection (ten of them held the pool).
    throw new ProblemError("unavailable", `the test quota could not be counted: ${error.message}; retry shortly`, { headers: { "retry-after": "5" } });
  }
  if (taken <= perHour) return;
  const retryAfter = secondsLeftInHour(hour, now);
  throw quotaSpent(`at most ${perHour} test notifications an hour per caller; retry in ${retryAfter} s`, perHour, retryAfter);
}

/**
 * The 429 of an hourly quota (this one, the redelivery quota), with the RateLimit-* headers of
 * that quota. They were the per-minute limiter's, which this request did not exceed
 * (`RateLimit-Remaining: 577`, `RateLimit-Reset: 3` beside `Retry-After: 2163`): a client that
 * retries after RateLimit-Reset met the same 429 every few seconds until the hour turned.
 */
export function quotaSpent(detail: string, perHour: number, retryAfter: number): ProblemError {
  return new ProblemError("rate_limited", detail, {
    headers: {
      "retry-after": String(retryAfter),
      "ratelimit-limit": String(perHour),
      "ratelimit-remaining": "0",
      "ratelimit-reset": String(retryAfter),
    },
  });
}
