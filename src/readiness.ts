// Whether a process can do its work now: PostgreSQL and Redis answer within a bound, accept
// its settings (PostgreSQL with a connection left for it: a full server's 53300 is a refusal,
// named with what to do, not "cannot be reached"), PostgreSQL takes writes, and the database's
// schema is the one the code was built for. The API's /readyz and the worker's answer the same
// question the same way (a worker waiting for Redis, or failing every job on a schema behind
// it, is not ready however well its metrics server answers).
import type { Deps } from "./deps.ts";
import { behindMessage, createSchemaCheck, type SchemaState } from "./db/schema-version.ts";
import { describeRefusal, misconfiguredSetting } from "./dependency-errors.ts";
import { trackConnectionError } from "./redis.ts";
import { TimedOut, withTimeout } from "./with-timeout.ts";

const CHECK_TIMEOUT_MS = 2_000;

export type Readiness =
  | { ready: true }
  | { ready: false; reason: string; /** Seconds before asking again is worth it. */ retryAfter: number };

/** A probe's outcome: its value, or the error it failed with (undefined: no answer in time). */
type Probe<T> = { ok: true; value: T } | { ok: false; error?: unknown };

/** Why a service is not ready: "unreachable" is said for both services in one phrase. */
type Problem = "unreachable" | { reason: string; retryAfter: number };

const READ_ONLY: Problem = { reason: "PostgreSQL is read-only (a standby?)", retryAfter: 5 };

export function createReadinessCheck(deps: Pick<Deps, "sql" | "redis">): () => Promise<Readiness> {
  const schemaState = createSchemaCheck(deps.sql);
  const redisConnectionError = trackConnectionError(deps.redis);
  return async () => {
    const [postgres, redis] = await Promise.all([
      // One statement for both ways a reachable PostgreSQL refuses writes (25006 on each): a
      // standby after a failover onto it, or a primary set read-only (default_transaction_read_only).
      withinBound(async () => {
        const [row] = await deps.sql<{ readOnly: boolean }[]>`
          select pg_is_in_recovery() or current_setting('transaction_read_only') = 'on' as "readOnly"`;
        return row?.readOnly ?? false;
      }),
      withinBound(() => deps.redis.ping()),
    ]);
    // Ping fails with ioredis's words when the connection is not ready; why it is not, the
    // connection's last error says.
    const redisProblem = redis.ok ? undefined : refusalOrUnreachable(redis.error, redisConnectionError());
    const postgresProblem = postgres.ok ? (postgres.value ? READ_ONLY : undefined) : refusalOrUnreachable(postgres.error);
    if (postgresProblem || redisProblem) return notReady([["PostgreSQL", postgresProblem], ["Redis", redisProblem]]);
    const schema = await schemaOrNull(schemaState);
    if (schema === null) return { ready: false, reason: "PostgreSQL cannot be read", retryAfter: 5 };
    if (!schema.current) return { ready: false, reason: behindMessage(schema), retryAfter: 30 };
    return { ready: true };
  };
}

function refusalOrUnreachable(...errors: unknown[]): Problem {
  for (const error of errors) {
    const refused = misconfiguredSetting(error);
    // A setting is not fixed in seconds: ask again later than for an outage.
    if (refused) return { reason: describeRefusal(refused), retryAfter: 30 };
  }
  return "unreachable";
}

/** Every problem in one reason ("PostgreSQL and Redis cannot be reached" when both are down). */
function notReady(problems: Array<[service: string, problem: Problem | undefined]>): Readiness {
  const unreachable = problems.filter(([, problem]) => problem === "unreachable").map(([service]) => service);
  const stated = problems.flatMap(([, problem]) => (problem && problem !== "unreachable" ? [problem] : []));
  if (unreachable.length > 0) stated.push({ reason: `${unreachable.join(" and ")} cannot be reached`, retryAfter: 5 });
  return { ready: false, reason: stated.map((problem) => problem.reason).join("; "), retryAfter: Math.min(...stated.map((p) => p.retryAfter)) };
}

/** The schema's state, or null when it could not be read in time. */
async function schemaOrNull(schemaState: () => Promise<SchemaState>): Promise<SchemaState | null> {
  const read = await withinBound(schemaState);
  return read.ok ? read.value : null;
}

async function withinBound<T>(probe: () => Promise<T>): Promise<Probe<T>> {
  try {
    return { ok: true, value: await withTimeout(probe, CHECK_TIMEOUT_MS, "readiness probe") };
  } catch (error) {
    return { ok: false, error: error instanceof TimedOut ? undefined : error };
  }
}
