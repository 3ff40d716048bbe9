// Whether a process can do its work now: PostgreSQL and Redis answer within a bound, accept
// its settings (PostgreSQL with a connection left for it: a full server's 53300 is a refusal,
// named with what to do, not "cannot be reached"), both take writes, and the database's
// schema is the one the code was built for. The API's /readyz and the worker's answer the same
// question the same way (a worker waiting for Redis, or failing every job on a schema behind
// it, is not ready however well its metrics server answers). A process whose role may not read
// that schema's version (drizzle's migrations table) cannot tell, so it is not ready either; the
// log says what to grant.
//
// Both answer without credentials, so a refusal is named there only by service and kind
// ("PostgreSQL refused the connection (see the log)"): the server's own words name the role,
// the database or the Redis user. Those go to the log, once each time the refusal changes.
//
// Redis is asked with a write, not a PING: a Redis full at maxmemory (noeviction), read-only or
// unable to persist answers PING and refuses every enqueue, and /readyz said ready while 27 of
// 30 ingests were answered 503. The write is one SET of a key under the queue prefix that expires
// on its own: one round trip, as the PING was, and nothing left behind.
//
// And the process's own clock, as its last measurement against PostgreSQL's judged it
// (clock-watch.ts, read here without a query): a worker whose clock is more than 5 s away takes
// no jobs, and an API that far off should get no requests from a load balancer (behind, it
// refuses fresh tokens and live transactions; either way it stamps what it writes wrongly).
import type { ClockSkewWatch } from "./clock-watch.ts";
import type { Config } from "./config.ts";
import type { Deps } from "./deps.ts";
import { behindMessage, createSchemaCheck, migrationsTableRefusal, type SchemaState } from "./db/schema-version.ts";
import {
  describeRefusal,
  errorSummary,
  misconfiguredSetting,
  redisWriteRefusal,
  refusedWhat,
  type Misconfiguration,
  type WriteRefusal,
} from "./dependency-errors.ts";
import { errorKind, REPEAT_LOG_WINDOW_MS } from "./log-repeats.ts";
import type { Logger } from "./logger.ts";
import { redactUrl } from "./redact-url.ts";
import { trackConnectionError } from "./redis.ts";
import { TimedOut, withTimeout } from "./with-timeout.ts";

const CHECK_TIMEOUT_MS = 2_000;
/** How long the Redis probe's key lives: it only has to be written. */
const PROBE_KEY_TTL_MS = 5_000;

export type Readiness =
  | { ready: true }
  | { ready: false; reason: string; /** Seconds before asking again is worth it. */ retryAfter: number };

/** A probe's outcome: its value, or the error it failed with (undefined: no answer in time). */
type Probe<T> = { ok: true; value: T } | { ok: false; error?: unknown };

/** Why a service is not ready: "unreachable" is said for both services in one phrase. */
type Problem = "unreachable" | { reason: string; retryAfter: number };

const READ_ONLY: Problem = { reason: "PostgreSQL is read-only (a standby?)", retryAfter: 5 };
/** The schema version not read in time, or for a reason of PostgreSQL's own: asked again soon. */
const SCHEMA_UNREAD = { reason: "PostgreSQL cannot be read", retryAfter: 5 };
/**
 * DATABASE_URL's role may use the service's tables but not read drizzle's migrations table: the
 * process cannot tell whether its schema is current, so it does not say it is ready. A grant
 * fixes it, not seconds: asked again as for a refused setting. The log has the grant, with the role.
 */
const SCHEMA_VERSION_REFUSED = {
  reason: "PostgreSQL refused to show the schema version: DATABASE_URL's role needs SELECT on drizzle.__drizzle_migrations (see the log)",
  retryAfter: 30,
};

/**
 * monitorSql, never the request pool: under an ingest flood every request-pool connection was
 * held by ingest waiting on row locks, the probe waited past its bound, and /readyz said 503 (on
 * every replica at once, for a load balancer to take them all out) while PostgreSQL answered.
 */
export type ReadinessDeps = Pick<Deps, "monitorSql" | "redis" | "logger"> & {
  config: Pick<Config, "databaseUrl" | "redisUrl" | "queuePrefix">;
  /** The process's clock against PostgreSQL's; without it the clock is not judged. */
  clockSkew?: Pick<ClockSkewWatch, "problem">;
};

/** Seconds before asking again whether a clock that was off agrees: it is measured every 5 s meanwhile. */
const CLOCK_RETRY_AFTER_SECONDS = 5;

export function createReadinessCheck(deps: ReadinessDeps): () => Promise<Readiness> {
  const schemaState = createSchemaCheck(deps.monitorSql);
  const redisConnectionError = trackConnectionError(deps.redis);
  const noteRefusal = createRefusalLog(deps.logger, deps.config);
  const noteSchemaRead = createSchemaReadLog(deps.logger);
  const noteWriteRefusal = createWriteRefusalLog(deps.logger);
  const noteSilence = createSilenceLog(deps.logger);
  // One statement for both ways a reachable PostgreSQL refuses writes (25006 on each): a
  // standby after a failover onto it, or a primary set read-only (default_transaction_read_only).
  const postgresProbe = oneAtATime(async () => {
    const [row] = await deps.monitorSql<{ readOnly: boolean }[]>`
      select pg_is_in_recovery() or current_setting('transaction_read_only') = 'on' as "readOnly"`;
    return row?.readOnly ?? false;
  });
  const probeKey = `${deps.config.queuePrefix}:readyz`;
  const redisProbe = oneAtATime(() => deps.redis.set(probeKey, "1", "PX", PROBE_KEY_TTL_MS));
  const services = async (): Promise<Readiness> => {
    const [postgres, redis] = await Promise.all([withinBound(postgresProbe), withinBound(redisProbe)]);
    noteSilence("PostgreSQL", postgres);
    noteSilence("Redis", redis);
    const writeRefusal = redis.ok ? undefined : redisWriteRefusal(redis.error);
    noteWriteRefusal(redis.ok, writeRefusal);
    // A command fails with ioredis's words when the connection is not ready; why it is not, the
    // connection's last error says.
    const redisRefusal = redis.ok || writeRefusal ? undefined : refusalOf(redis.error, redisConnectionError());
    const postgresRefusal = postgres.ok ? undefined : refusalOf(postgres.error);
    noteRefusal("PostgreSQL", postgres.ok, postgresRefusal);
    noteRefusal("Redis", redis.ok, redisRefusal);
    const redisProblem = redis.ok ? undefined : writeRefusal ? writesRefused(writeRefusal) : publicProblem(redisRefusal);
    const postgresProblem = postgres.ok ? (postgres.value ? READ_ONLY : undefined) : publicProblem(postgresRefusal);
    if (postgresProblem || redisProblem) return notReady([["PostgreSQL", postgresProblem], ["Redis", redisProblem]]);
    const read = await withinBound(schemaState);
    const refusedVersion = read.ok ? undefined : migrationsTableRefusal(read.error, deps.monitorSql);
    noteSchemaRead(read, refusedVersion);
    if (!read.ok) return { ready: false, ...(refusedVersion ? SCHEMA_VERSION_REFUSED : SCHEMA_UNREAD) };
    if (!read.value.current) return { ready: false, reason: behindMessage(read.value), retryAfter: 30 };
    return { ready: true };
  };
  return async () => withClock(await services(), deps.clockSkew?.problem());
}

/** A clock that is off is one more reason not to be ready, said after the services' own. */
function withClock(state: Readiness, clockProblem: string | undefined): Readiness {
  if (!clockProblem) return state;
  if (state.ready) return { ready: false, reason: clockProblem, retryAfter: CLOCK_RETRY_AFTER_SECONDS };
  return { ready: false, reason: `${state.reason}; ${clockProblem}`, retryAfter: Math.min(state.retryAfter, CLOCK_RETRY_AFTER_SECONDS) };
}

/** The first of the errors that is a refusal of the process's settings. */
function refusalOf(...errors: unknown[]): Misconfiguration | undefined {
  for (const error of errors) {
    const refused = misconfiguredSetting(error);
    if (refused) return refused;
  }
  return undefined;
}

/** What /readyz may say of a service that did not answer: the service and the kind of refusal, never the server's words. */
function publicProblem(refused: Misconfiguration | undefined): Problem {
  if (!refused) return "unreachable";
  const what = refusedWhat(refused);
  // A setting is not fixed in seconds: ask again later than for an outage.
  return { reason: `${refused.service} refused ${what} (see the log)`, retryAfter: 30 };
}

type Service = Misconfiguration["service"];

/** Redis answers but takes no writes: named by its meaning (the server's words go to the log); asked again soon, it may pass. */
const writesRefused = (refusal: WriteRefusal): Problem => ({ reason: `Redis refuses writes: ${refusal.meaning} (see the log)`, retryAfter: 5 });

/**
 * Logs Redis's refusal of writes in its own words, at warn, once each time its kind changes (not
 * on every probe), and once that it takes writes again. Nothing to change in the settings: it
 * clears when memory, the disk or the replicas do (README, Production settings).
 */
function createWriteRefusalLog(logger: Logger) {
  let logged: WriteRefusal | undefined;
  return (answered: boolean, refusal: WriteRefusal | undefined): void => {
    if (answered) {
      if (!logged) return;
      logged = undefined;
      logger.info("readiness: Redis takes writes again");
      return;
    }
    if (!refusal || logged?.code === refusal.code) return;
    logged = refusal;
    logger.warn(
      { code: refusal.code, cause: refusal.message },
      `readiness: Redis refuses writes (${refusal.meaning}): every enqueue fails; /readyz answers 503 until it takes them`,
    );
  };
}

/**
 * Logs a service that neither answers nor refuses within the bound (a frozen server, a network
 * partition), which raises no error anywhere: a worker's jobs only wait, and its log said nothing
 * for as long as it lasted. At warn once a minute while it lasts, and once at info when the
 * service answers again.
 */
function createSilenceLog(logger: Logger, now: () => number = Date.now) {
  const silence = new Map<Service, { since: number; warnedAt: number }>();
  return (service: Service, probe: Probe<unknown>): void => {
    const seen = silence.get(service);
    if (probe.ok) {
      if (!seen) return;
      silence.delete(service);
      logger.info({ silentForMs: now() - seen.since }, `readiness: ${service} answers again`);
      return;
    }
    // An answer that is an error (refused, reset) is an outage the service's clients report.
    if (probe.error !== undefined) return;
    const at = now();
    if (seen && at - seen.warnedAt < REPEAT_LOG_WINDOW_MS) return;
    // From the start of the first probe that got no answer.
    const since = seen?.since ?? at - CHECK_TIMEOUT_MS;
    silence.set(service, { since, warnedAt: at });
    logger.warn(
      { timeoutMs: CHECK_TIMEOUT_MS, silentSince: new Date(since).toISOString() },
      `readiness: ${service} did not answer within ${CHECK_TIMEOUT_MS} ms (its connections are open but no answer comes); work that needs it waits, and /readyz answers 503 until it answers`,
    );
  };
}

/**
 * Logs what /readyz leaves out: a service's refusal in its own words, with the setting to check
 * (its URL without the password), once each time the refusal changes (another SQLSTATE or Redis
 * error word), not on every probe; and that the service accepts the process again once it answers.
 * A service that cannot be reached leaves the last refusal as it is: it is logged again only if
 * it changed meanwhile.
 */
function createRefusalLog(logger: Logger, urls: Pick<Config, "databaseUrl" | "redisUrl">) {
  const logged = new Map<Service, Misconfiguration>();
  return (service: Service, answered: boolean, refused: Misconfiguration | undefined): void => {
    const previous = logged.get(service);
    if (answered) {
      if (!previous) return;
      logged.delete(service);
      logger.info({ setting: previous.setting }, `readiness: ${service} accepts the connection again`);
      return;
    }
    if (!refused || (previous && previous.code === refused.code)) return;
    logged.set(service, refused);
    const url = redactUrl(refused.setting === "DATABASE_URL" ? urls.databaseUrl : urls.redisUrl);
    logger.error(
      { setting: refused.setting, url, code: refused.code },
      `readiness: ${describeRefusal(refused)} — check ${refused.setting} (${url}); /readyz answers 503 until it is fixed`,
    );
  };
}

/** Every problem in one reason ("PostgreSQL and Redis cannot be reached" when both are down). */
function notReady(problems: Array<[service: string, problem: Problem | undefined]>): Readiness {
  const unreachable = problems.filter(([, problem]) => problem === "unreachable").map(([service]) => service);
  const stated = problems.flatMap(([, problem]) => (problem && problem !== "unreachable" ? [problem] : []));
  if (unreachable.length > 0) stated.push({ reason: `${unreachable.join(" and ")} cannot be reached`, retryAfter: 5 });
  return { ready: false, reason: stated.map((problem) => problem.reason).join("; "), retryAfter: Math.min(...stated.map((p) => p.retryAfter)) };
}

/**
 * Logs why the schema version could not be read, which /readyz says only in short: a refusal of
 * drizzle's table to the process's role at error, with the grant to give; any other error at
 * warn, in its own words. Once each time the kind of error changes (SQLSTATE or message), not on
 * every probe (a load balancer asks every few seconds); and once that the version can be read
 * again. A probe without an answer in time (a slow PostgreSQL) is not logged.
 */
function createSchemaReadLog(logger: Logger) {
  let logged: string | undefined;
  return (read: Probe<SchemaState>, refusal: string | undefined): void => {
    if (read.ok) {
      if (logged === undefined) return;
      logged = undefined;
      logger.info("readiness: the schema version can be read again");
      return;
    }
    if (read.error === undefined) return;
    const kind = errorKind(read.error);
    if (kind === logged) return;
    logged = kind;
    if (refusal) logger.error({ code: kind }, `readiness: ${refusal} /readyz answers 503 until it is granted`);
    else logger.warn({ err: read.error }, `readiness: the schema version could not be read (${errorSummary(read.error)}); /readyz answers 503 until it can`);
  };
}

/**
 * The probe still in flight, if there is one, instead of a new one: a server that does not
 * answer would otherwise hold one more waiting query for every probe (a load balancer asks
 * every few seconds), all sent at once when it answers again.
 */
function oneAtATime<T>(probe: () => Promise<T>): () => Promise<T> {
  let inFlight: Promise<T> | undefined;
  return () => {
    inFlight ??= probe().finally(() => {
      inFlight = undefined;
    });
    return inFlight;
  };
}

/**
 * Runs the check every intervalMs, one at a time, for its log lines: a worker's /readyz is asked
 * only when WORKER_METRICS_PORT is set and something polls it, and a worker whose PostgreSQL
 * froze logged nothing for as long as it lasted.
 */
export function checkReadinessEvery(check: () => Promise<Readiness>, intervalMs: number): { stop: () => void } {
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => void check().catch(() => {}).finally(schedule), intervalMs);
    timer.unref();
  };
  schedule();
  return {
    stop: () => {
      stopped = true;
      clearTimeout(timer);
    },
  };
}

async function withinBound<T>(probe: () => Promise<T>): Promise<Probe<T>> {
  try {
    return { ok: true, value: await withTimeout(probe, CHECK_TIMEOUT_MS, "readiness probe") };
  } catch (error) {
    return { ok: false, error: error instanceof TimedOut ? undefined : error };
  }
}
