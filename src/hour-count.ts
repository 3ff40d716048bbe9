// A count per clock hour in Redis, shared by every process: the test and redelivery quotas (per
// caller, in the API) and the SMS and email budgets (per alert owner, in the workers). The key
// names its hour, and lives an hour from its last count (a count read as its hour ends is still
// there); losing it (a Redis flush) only starts the hour afresh.
import type { Redis } from "ioredis";

const HOUR_SECONDS = 3600;

/** The clock hour `at` falls in, as a number (hours since 1970). */
export const hourOf = (at: Date): number => Math.floor(at.getTime() / 1000 / HOUR_SECONDS);

/** When that hour ends, in seconds from `at` (a 429's Retry-After). */
export const secondsLeftInHour = (hour: number, at: Date): number => (hour + 1) * HOUR_SECONDS - Math.floor(at.getTime() / 1000);

/** Adds `by` to the count at `key`; answers the count with it. `what` names it in an error. */
export async function addToHourCount(redis: Redis, key: string, by: number, what: string): Promise<number> {
  const results = await redis.multi().incrby(key, by).expire(key, HOUR_SECONDS).exec();
  const [error, total] = results?.[0] ?? [new Error(`${what} could not be counted`)];
  if (error) throw error;
  return Number(total);
}
