import { fileURLToPath } from "node:url";
import { migrate } from "drizzle-orm/postgres-js/migrator";
import { describeRefusal, errorSummary, misconfiguredSetting } from "../dependency-errors.ts";
import { PREFLIGHT_TIMEOUT_MS } from "../preflight.ts";
import { redactUrl } from "../redact-url.ts";
import { TimedOut, withTimeout } from "../with-timeout.ts";
import { createDb } from "./client.ts";

export const MIGRATIONS_FOLDER = fileURLToPath(new URL("../../drizzle", import.meta.url));

/**
 * The session advisory lock that migrations of one database take in turn ("migr", 0). drizzle's
 * migrate takes none: it reads the last migration applied, then applies the rest, so two runs at
 * once (each replica's init container or entrypoint) both applied them, and every one but the
 * first failed on a catalog key (`duplicate key value violates unique constraint
 * "pg_type_typname_nsp_index"`) and exited 1.
 */
export const MIGRATION_LOCK: readonly [number, number] = [0x6d696772, 0];

/**
 * PostgreSQL did not give the migration a connection: it refused DATABASE_URL, could not be
 * reached, or did not answer within the bound. Nothing was applied. The message is the whole
 * diagnosis, for an operator (the URL's password hidden).
 */
export class MigrationConnectError extends Error {
  override name = "MigrationConnectError";
}

/**
 * Applies every committed migration in drizzle/ (or `migrationsFolder`) that the database has not
 * seen yet.
 *
 * First PostgreSQL must answer a `select 1` within `connectTimeoutMs` (the bound the API and the
 * workers give it at start), on the one connection that the migration then runs on. Without it,
 * a server that takes the connection and hangs up before it is ready (a proxy or a firewall in
 * front of a host that is gone) kept the migration's first statement queued while postgres.js
 * reconnected, over and over, without a word: `npm run migrate` never ended. The statements
 * themselves have no bound (one that rebuilds an index on a large table may rightly run long);
 * a connection lost under one fails it, at once or after the keepalive probes (db/client.ts).
 */
export async function runMigrations(
  databaseUrl: string,
  migrationsFolder = MIGRATIONS_FOLDER,
  connectTimeoutMs = PREFLIGHT_TIMEOUT_MS,
  options: { onWait?: () => void } = {},
): Promise<void> {
  const { db, sql } = createDb(databaseUrl, { max: 1 });
  let connected = false;
  try {
    await withTimeout(() => sql`select 1`, connectTimeoutMs, "PostgreSQL").catch((error: unknown) => {
      throw new MigrationConnectError(notConnected(error, databaseUrl, connectTimeoutMs), { cause: error });
    });
    connected = true;
    // Held by this session (the pool's one connection, which the migration runs on) until
    // sql.end closes it: a second run waits here, then finds nothing left to apply. Unbounded,
    // as the migration it waits for is.
    const [key, subkey] = MIGRATION_LOCK;
    const [taken] = await sql<{ locked: boolean }[]>`select pg_try_advisory_lock(${key}, ${subkey}) as locked`;
    if (!taken?.locked) {
      options.onWait?.();
      await sql`select pg_advisory_lock(${key}, ${subkey})`;
    }
    await migrate(db, { migrationsFolder });
  } finally {
    // Without a connection there is nothing to finish: end at once what is still trying (a
    // graceful end would wait for the attempt that never answers).
    await sql.end({ timeout: connected ? 5 : 0 });
  }
}

function notConnected(error: unknown, databaseUrl: string, timeoutMs: number): string {
  const url = redactUrl(databaseUrl);
  const refused = misconfiguredSetting(error);
  if (refused) return `${describeRefusal(refused)} — check DATABASE_URL (${url})`;
  // postgres.js's own connect timeout (5 s) may come first: the same verdict.
  if (error instanceof TimedOut || (error as { code?: unknown } | undefined)?.code === "CONNECT_TIMEOUT")
    return `PostgreSQL at ${url} did not answer within ${formatBound(timeoutMs)}`;
  return `PostgreSQL at ${url} cannot be reached (${errorSummary(error)})`;
}

const formatBound = (ms: number): string => (ms % 1_000 === 0 ? `${ms / 1_000} s` : `${ms} ms`);
