// How far this process's wall clock is from PostgreSQL's, and whether that is too far to work by.
// Every process takes "now" from its own clock and writes it where the others compare it with
// theirs (an alert's last notification, a notification's next attempt, the webhook-timestamp
// header, BullMQ's delayed jobs, which a worker promotes by its own clock). A delivery worker 10
// minutes ahead had every webhook refused for good (a Standard Webhooks library takes a timestamp
// at most 5 minutes off), one 2 minutes ahead sent a second firing inside a 60 s cooldown, retries
// went out milliseconds apart, and an API 11 minutes behind refused every live ingest; nothing
// said why. PostgreSQL is the service's record, so its clock is the reference, with Redis's as
// the witness that tells a process off from a PostgreSQL off (judgeClock).
//
// The judgment only, without I/O: clock-watch.ts measures and acts on it.

/** How far a clock may be from PostgreSQL's before the process stops the work that depends on it. */
export const CLOCK_SKEW_BOUND_MS = 5_000;

/**
 * One measurement: aheadMs is how far this process's clock is ahead of PostgreSQL's (negative:
 * behind); the true value lies within ±uncertaintyMs of it (half the time the round trip took).
 */
export type ClockReading = { aheadMs: number; uncertaintyMs: number };

/**
 * The reading from PostgreSQL's clock (pgMs, its clock_timestamp() in ms) and this process's
 * clock just before (t0) and just after (t1) asking it. PostgreSQL read its clock somewhere in
 * between, so its time is compared with the middle: NTP's offset (what to add to ours to get
 * PostgreSQL's) is pgMs - (t0 + t1) / 2, and ahead is that with the sign turned.
 */
export function clockReading(t0: number, pgMs: number, t1: number): ClockReading {
  return { aheadMs: (t0 + t1) / 2 - pgMs, uncertaintyMs: Math.max(0, (t1 - t0) / 2) };
}

/**
 * Off only when it is off beyond doubt: even at the nearest end of its uncertainty the clock is
 * more than the bound away. A slow round trip makes a reading uncertain, never "off".
 */
export function clockIsOff(reading: ClockReading, boundMs: number = CLOCK_SKEW_BOUND_MS): boolean {
  return Math.abs(reading.aheadMs) - reading.uncertaintyMs > boundMs;
}

/**
 * The process's clock judged against both stores': it is the one that is off only when it is
 * off from PostgreSQL's and from Redis's too. Off from PostgreSQL's alone, while Redis's agrees
 * with it, it is PostgreSQL's host whose clock is wrong: stopping every worker then would turn
 * one host's clock into an outage of all alerting, while the processes, whose clocks stamp and
 * compare every time that matters (cooldowns, retries, signatures, BullMQ's delayed jobs), agree
 * with one another. Without a Redis reading (Redis away), PostgreSQL's decides alone.
 */
export type ClockJudgment = { off: boolean; postgresOff: boolean };

export function judgeClock(postgres: ClockReading, redis: ClockReading | undefined, boundMs: number = CLOCK_SKEW_BOUND_MS): ClockJudgment {
  const fromPostgres = clockIsOff(postgres, boundMs);
  const fromRedis = redis === undefined ? fromPostgres : clockIsOff(redis, boundMs);
  return { off: fromPostgres && fromRedis, postgresOff: fromPostgres && !fromRedis };
}

/** Seconds for people: whole ones from 100 s on, else to a tenth ("5.2 s", "120 s"). */
export function formatSeconds(ms: number): string {
  const seconds = Math.abs(ms) / 1000;
  if (seconds >= 100) return `${Math.round(seconds)} s`;
  return `${Number(seconds.toFixed(1))} s`;
}

/** "this process's clock is 120 s ahead of PostgreSQL's (bound 5 s)". */
export function describeSkew(reading: ClockReading, boundMs: number = CLOCK_SKEW_BOUND_MS): string {
  const way = reading.aheadMs >= 0 ? "ahead of" : "behind";
  return `this process's clock is ${formatSeconds(reading.aheadMs)} ${way} PostgreSQL's (bound ${formatSeconds(boundMs)})`;
}

/** Seconds with millisecond precision, for a log field or a gauge (positive: ahead). */
export function toSeconds(ms: number): number {
  return Math.round(ms) / 1000;
}
