// Measures this process's clock against PostgreSQL's (through the process's own pool), and
// Redis's as the witness (clock-skew.ts' judgeClock: off from PostgreSQL's alone, it is
// PostgreSQL's host that is off, and the process goes on, saying so), when it
// starts and every 30 s after, and says when it goes off and when it agrees again: at warn once
// when it goes more than the bound away (clock-skew.ts), at info once when it is back. What the
// process does meanwhile is its own: a worker takes no jobs (run-workers.ts' gate), and every
// process's /readyz answers 503 naming the clock (readiness.ts). A measurement that fails
// (PostgreSQL down or slow) changes nothing: the readiness check and the process's other lines
// say PostgreSQL is away.
import type { Redis } from "ioredis";
import { CLOCK_SKEW_BOUND_MS, clockReading, describeSkew, formatSeconds, judgeClock, toSeconds, type ClockReading } from "./clock-skew.ts";
import type { Sql } from "./db/client.ts";
import { errorSummary } from "./dependency-errors.ts";
import type { Logger } from "./logger.ts";
import { redisNowMs } from "./redis.ts";
import { withTimeout } from "./with-timeout.ts";

/** How often a clock that agrees is measured again. */
export const CLOCK_CHECK_EVERY_MS = 30_000;
/** How often a clock that is off is: once NTP has put it right, the process is back within seconds. */
const OFF_CHECK_EVERY_MS = 5_000;
/** Before the first measurement has succeeded (PostgreSQL not answering yet): a worker waits for one to take jobs. */
const FIRST_CHECK_RETRY_MS = 2_000;
/** A measurement that takes longer is given up (and an answer that slow would say little anyway). */
const MEASURE_TIMEOUT_MS = 5_000;

/** What the process is called in its lines, and what it does while its clock is off and once it agrees again. */
export type ClockRole = { who: string; consequence: string; again: string };

export const WORKER_CLOCK_ROLE: ClockRole = {
  who: "worker",
  consequence: "it takes no jobs until they agree",
  again: "it takes jobs again",
};

export const API_CLOCK_ROLE: ClockRole = {
  who: "api",
  consequence: "it is not ready until they agree (it still serves the requests sent to it)",
  again: "it is ready again",
};

export type ClockSkewWatch = {
  /** Measures once (settled either way), then keeps measuring on an unref'd timer until stop(). A second call returns the first's. */
  start: (role: ClockRole) => Promise<void>;
  stop: () => void;
  /** The last successful measurement; undefined before the first. */
  reading: () => ClockReading | undefined;
  /** Measured, and within the bound: what a worker takes jobs by. */
  agrees: () => boolean;
  /** While the clock is off: why, for /readyz ("this process's clock is 120 s ahead of PostgreSQL's (bound 5 s): …"). */
  problem: () => string | undefined;
  /** Called with agrees() each time it changes; returns the unsubscription. */
  onChange: (listener: (agrees: boolean) => void) => () => void;
};

/** One measurement: PostgreSQL's clock_timestamp() bracketed by this process's clock. */
export async function measureClock(sql: Sql, localNow: () => number = Date.now): Promise<ClockReading> {
  const t0 = localNow();
  const [row] = await sql<{ ms: number }[]>`select extract(epoch from clock_timestamp())::float8 * 1000 as ms`;
  const t1 = localNow();
  if (!row) throw new Error("PostgreSQL returned no row for clock_timestamp()");
  return clockReading(t0, row.ms, t1);
}

/** One measurement of Redis's clock (TIME), as measureClock does PostgreSQL's. */
export async function measureRedisClock(redis: Redis, localNow: () => number = Date.now): Promise<ClockReading> {
  const t0 = localNow();
  const redisMs = await redisNowMs(redis);
  const t1 = localNow();
  return clockReading(t0, redisMs, t1);
}

export type ClockWatchOptions = {
  boundMs?: number;
  /** This process's clock (a test's, shifted). */
  localNow?: () => number;
};

export function createClockSkewWatch(deps: { sql: Sql; redis?: Redis; logger: Logger }, options: ClockWatchOptions = {}): ClockSkewWatch {
  const boundMs = options.boundMs ?? CLOCK_SKEW_BOUND_MS;
  const localNow = options.localNow ?? Date.now;
  const listeners = new Set<(agrees: boolean) => void>();
  let role: ClockRole = WORKER_CLOCK_ROLE;
  let last: ClockReading | undefined;
  let off = false;
  let postgresOff = false;
  let started: Promise<void> | undefined;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const agrees = () => last !== undefined && !off;

  const fields = (reading: ClockReading) => ({
    offsetSeconds: toSeconds(reading.aheadMs),
    uncertaintySeconds: toSeconds(reading.uncertaintyMs),
    boundSeconds: toSeconds(boundMs),
  });

  const check = async (): Promise<void> => {
    let reading: ClockReading;
    try {
      reading = await withTimeout(() => measureClock(deps.sql, localNow), MEASURE_TIMEOUT_MS, "PostgreSQL (its clock)");
    } catch (error) {
      deps.logger.debug({ err: error }, `${role.who}: could not read PostgreSQL's clock (${errorSummary(error)}); its clock is judged as before`);
      return;
    }
    // Redis's clock as the witness (judgeClock); none when Redis does not answer in time.
    const witness = deps.redis
      ? await withTimeout(() => measureRedisClock(deps.redis!, localNow), MEASURE_TIMEOUT_MS, "Redis (its clock)").catch(() => undefined)
      : undefined;
    if (stopped) return;
    const agreed = agrees();
    const first = last === undefined;
    const wasOff = off;
    const wasPostgresOff = postgresOff;
    last = reading;
    ({ off, postgresOff } = judgeClock(reading, witness, boundMs));
    if (postgresOff && !wasPostgresOff) {
      deps.logger.warn(
        fields(reading),
        `${role.who}: PostgreSQL's clock is ${formatSeconds(reading.aheadMs)} ${reading.aheadMs >= 0 ? "behind" : "ahead of"} this process's, ` +
          "and Redis's agrees with this process's: PostgreSQL's host is the one off, and this process goes on working; set that host's clock right (NTP or chrony)",
      );
    } else if (!postgresOff && wasPostgresOff && !off) {
      deps.logger.info(fields(reading), `${role.who}: PostgreSQL's clock agrees with this process's again (${way(reading)})`);
    }
    if (off && !wasOff) {
      deps.logger.warn(
        fields(reading),
        `${role.who}: ${describeSkew(reading, boundMs)}: ${role.consequence}; set this host's clock right (NTP or chrony; PostgreSQL's host is the reference)`,
      );
    } else if (!off && wasOff) {
      deps.logger.info(fields(reading), `${role.who}: this process's clock agrees with PostgreSQL's again (${way(reading)}, bound ${formatSeconds(boundMs)}): ${role.again}`);
    } else if (!off && first) {
      deps.logger.debug(fields(reading), `${role.who}: this process's clock agrees with PostgreSQL's (${way(reading)}, bound ${formatSeconds(boundMs)})`);
    }
    if (agrees() !== agreed) for (const listener of [...listeners]) listener(agrees());
  };

  const schedule = () => {
    if (stopped) return;
    const delay = last === undefined ? FIRST_CHECK_RETRY_MS : off ? OFF_CHECK_EVERY_MS : CLOCK_CHECK_EVERY_MS;
    timer = setTimeout(() => void check().finally(schedule), delay);
    timer.unref();
  };

  return {
    start: (given) => {
      role = given;
      started ??= check().finally(schedule);
      return started;
    },
    stop: () => {
      stopped = true;
      clearTimeout(timer);
    },
    reading: () => last,
    agrees,
    problem: () => (off && last ? `${describeSkew(last, boundMs)}: ${role.consequence}` : undefined),
    onChange: (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}

/** "0.3 s ahead", "1.2 s behind". */
function way(reading: ClockReading): string {
  return `${formatSeconds(reading.aheadMs)} ${reading.aheadMs >= 0 ? "ahead" : "behind"}`;
}
