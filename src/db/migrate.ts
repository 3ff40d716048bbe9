import { setTimeout } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { migrate } from "drizzle-orm/postgres-js/migrator";
import { DEFAULT_MIGRATION_LOCK_TIMEOUT_MS } from "../config.ts";
import { describeRefusal, errorSummary, misconfiguredSetting } from "../dependency-errors.ts";
import { PREFLIGHT_TIMEOUT_MS } from "../preflight.ts";
import { redactUrl } from "../redact-url.ts";
import { TimedOut, withTimeout } from "../with-timeout.ts";
import type { Sql } from "postgres";
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
  options: MigrationOptions = {},
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
    // Set only now: the advisory lock above is rightly waited for as long as the other run takes.
    const lockTimeoutMs = options.lockTimeoutMs ?? DEFAULT_MIGRATION_LOCK_TIMEOUT_MS;
    await sql`select set_config('lock_timeout', ${String(lockTimeoutMs)}, false)`;
    await migrateGivingWay(() => migrate(db, { migrationsFolder }), sql, lockTimeoutMs, options);
  } finally {
    // Without a connection there is nothing to finish: end at once what is still trying (a
    // graceful end would wait for the attempt that never answers).
    await sql.end({ timeout: connected ? 5 : 0 });
  }
}

/**
 * Runs `apply` (every pending migration, in one transaction) until no statement of it waits
 * longer than the lock timeout for a lock, at most `attempts` times. A statement that waits for
 * a table's lock (an ALTER TABLE behind an old worker's open transaction) makes every later
 * reader and writer of that table wait behind it: a plain read of notifications waited 9 s
 * behind 0027 before the bound. Timed out, the whole run is undone (nothing applied), the
 * queued sessions go on, and after a pause the run tries again.
 */
async function migrateGivingWay(apply: () => Promise<void>, sql: Sql, lockTimeoutMs: number, options: MigrationOptions): Promise<void> {
  const attempts = options.attempts ?? 3;
  for (let attempt = 1; ; attempt++) {
    try {
      await apply();
      return;
    } catch (error) {
      if (!isLockTimeout(error)) throw error;
      const waited = `a migration's statement waited ${formatBound(lockTimeoutMs)} for a lock (SQLSTATE 55P03 lock_not_available) at ${failedStatement(error)}`;
      const holders = await sessionsHoldingTableLocks(sql);
      const blockedBy = holders === "" ? "" : `; open transactions holding table locks: ${holders}`;
      if (attempt >= attempts)
        throw new MigrationLockTimeout(
          `${waited}${blockedBy}; gave up after ${attempts} attempts, nothing applied — end those transactions (stop the previous version's processes) or raise MIGRATION_LOCK_TIMEOUT, then run npm run migrate again`,
          { cause: error },
        );
      options.onLockTimeout?.(`${waited}${blockedBy}; nothing applied, trying again (attempt ${attempt + 1} of ${attempts})`);
      await setTimeout(options.retryPauseMs ?? lockTimeoutMs);
    }
  }
}

/** A statement of a migration gave up waiting for a lock: lock_timeout (SQLSTATE 55P03). */
export class MigrationLockTimeout extends Error {
  override name = "MigrationLockTimeout";
}

export type MigrationOptions = {
  /** Another run holds the migration lock: this one waits for it. */
  onWait?: () => void;
  /** How long one statement may wait for a lock; 0, without a bound. 5 s by default. */
  lockTimeoutMs?: number;
  /** Runs, the first included, before a lock timeout fails the migration. 3 by default. */
  attempts?: number;
  /** Between runs: time for the sessions queued behind the one that gave way. The lock timeout by default. */
  retryPauseMs?: number;
  /** A run gave way and will be tried again: why, in one line. */
  onLockTimeout?: (message: string) => void;
};

// drizzle wraps what postgres.js threw ("Failed query: …", the server's error as its cause).
const serverError = (error: unknown): { code?: unknown } | undefined =>
  ((error as { cause?: unknown } | undefined)?.cause ?? error) as { code?: unknown } | undefined;

const isLockTimeout = (error: unknown): boolean => serverError(error)?.code === "55P03";

/** The first line of the statement that waited, past its comments: drizzle's message holds it. */
function failedStatement(error: unknown): string {
  const message = error instanceof Error ? error.message : "";
  const query = message.startsWith("Failed query: ") ? message.slice("Failed query: ".length).split("\nparams:")[0]! : "";
  const line = query
    .split("\n")
    .map((text) => text.trim())
    .find((text) => text !== "" && !text.startsWith("--"));
  if (line === undefined) return "a statement drizzle did not name";
  const statement = line.replace(/;$/, "");
  return statement.length > 100 ? `${statement.slice(0, 100)}…` : statement;
}

/**
 * The other sessions of this database with a transaction open that holds a lock on a table,
 * oldest first: the likely blockers, for the operator to find (the wait is over by now, so
 * pg_blocking_pids has nothing left to say).
 */
async function sessionsHoldingTableLocks(sql: Sql): Promise<string> {
  const rows = await sql<{ pid: number; application: string; state: string | null; openSeconds: number }[]>`
    select a.pid, a.application_name as application, a.state,
           extract(epoch from now() - a.xact_start)::int as "openSeconds"
    from pg_stat_activity a
    where a.datname = current_database() and a.pid <> pg_backend_pid() and a.xact_start is not null
      and exists (select 1 from pg_locks l where l.pid = a.pid and l.locktype = 'relation' and l.granted)
    order by a.xact_start
    limit 3`.catch(() => []);
  return rows
    .map((row) => `pid ${row.pid} (${row.application || "no application_name"}, ${row.state ?? "unknown state"}, open ${row.openSeconds} s)`)
    .join(", ");
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
