// Whether a process can do its work now: PostgreSQL and Redis answer within a bound, and the
// database's schema is the one the code was built for. The API's /readyz and the worker's
// answer the same question the same way (a worker waiting for Redis, or failing every job on
// a schema behind it, is not ready however well its metrics server answers).
import type { Deps } from "./deps.ts";
import { behindMessage, createSchemaCheck, type SchemaState } from "./db/schema-version.ts";

const CHECK_TIMEOUT_MS = 2_000;

export type Readiness =
  | { ready: true }
  | { ready: false; reason: string; /** Seconds before asking again is worth it. */ retryAfter: number };

export function createReadinessCheck(deps: Pick<Deps, "sql" | "redis">): () => Promise<Readiness> {
  const schemaState = createSchemaCheck(deps.sql);
  return async () => {
    const [postgres, redis] = await Promise.all([withinBound(() => deps.sql`select 1`), withinBound(() => deps.redis.ping())]);
    if (!postgres || !redis) {
      const down = [postgres ? null : "PostgreSQL", redis ? null : "Redis"].filter(Boolean).join(" and ");
      return { ready: false, reason: `${down} cannot be reached`, retryAfter: 5 };
    }
    const schema = await schemaOrNull(schemaState);
    if (schema === null) return { ready: false, reason: "PostgreSQL cannot be read", retryAfter: 5 };
    if (!schema.current) return { ready: false, reason: behindMessage(schema), retryAfter: 30 };
    return { ready: true };
  };
}

/** The schema's state, or null when it could not be read in time. */
async function schemaOrNull(schemaState: () => Promise<SchemaState>): Promise<SchemaState | null> {
  let state: SchemaState | null = null;
  const read = await withinBound(async () => {
    state = await schemaState();
  });
  return read ? state : null;
}

async function withinBound(probe: () => Promise<unknown>): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      probe(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error("timeout")), CHECK_TIMEOUT_MS);
      }),
    ]);
    return true;
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}
