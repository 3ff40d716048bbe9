// Whether the database has every migration this code was written against. Code newer than
// its schema fails on the first statement that names a new column: a 500 for each request, a
// failed attempt for each job. So /readyz keeps such a process out of rotation and says what
// to run, and a worker says it at start. (A database ahead of the code is not flagged: old
// processes still running just after `npm run migrate` are part of an ordinary upgrade.)
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describeRefusal, errorSummary, misconfiguredSetting } from "../dependency-errors.ts";
import type { Logger } from "../logger.ts";
import type { Sql } from "./client.ts";
import { MIGRATIONS_FOLDER } from "./migrate.ts";

type Migration = { tag: string; when: number };

export type SchemaState = { current: true } | { current: false; applied: string | null; needed: string };

/** The migrations this code ships, oldest first, from drizzle-kit's journal. */
export function shippedMigrations(folder = MIGRATIONS_FOLDER): Migration[] {
  const journal = JSON.parse(readFileSync(join(folder, "meta", "_journal.json"), "utf8")) as { entries: Migration[] };
  return journal.entries;
}

const UNDEFINED_TABLE = "42P01";
const INVALID_SCHEMA = "3F000";
const INSUFFICIENT_PRIVILEGE = "42501";

/**
 * Compares the newest migration applied (drizzle records each one's journal time as
 * created_at) with the newest shipped. Once current, a process stays current: migrations are
 * never taken back, so later calls answer without a query.
 */
export function createSchemaCheck(sql: Sql, shipped: readonly Migration[] = shippedMigrations()): () => Promise<SchemaState> {
  const needed = shipped.at(-1)!;
  let current = false;
  return async () => {
    if (current) return { current: true };
    const newest = await newestApplied(sql);
    if (newest !== null && newest >= needed.when) {
      current = true;
      return { current: true };
    }
    const applied = newest === null ? null : ([...shipped].reverse().find((m) => m.when <= newest)?.tag ?? null);
    return { current: false, applied, needed: needed.tag };
  };
}

async function newestApplied(sql: Sql): Promise<number | null> {
  try {
    const [row] = await sql<{ newest: number | null }[]>`select max(created_at)::float8 as newest from drizzle.__drizzle_migrations`;
    return row?.newest ?? null;
  } catch (error) {
    // A database nobody has migrated yet has neither the schema nor the table.
    const code = (error as { code?: unknown }).code;
    if (code === UNDEFINED_TABLE || code === INVALID_SCHEMA) return null;
    throw error;
  }
}

/**
 * The schema version is read from drizzle's table, which `npm run migrate` creates under the
 * role it runs as. A process that logs in as another role, one with rights on the service's
 * tables only, is refused that table (42501: on schema drizzle, or on the table) while every
 * request and job works. For such an error, what is wrong and what to grant (with the role the
 * process logs in as: its server's words name the schema or table, not the role); undefined
 * for any other error.
 */
export function migrationsTableRefusal(error: unknown, sql: Pick<Sql, "options">): string | undefined {
  if ((error as { code?: unknown } | null)?.code !== INSUFFICIENT_PRIVILEGE) return undefined;
  const role = quotedRole(sql);
  return (
    `PostgreSQL refused to show the schema version to DATABASE_URL's role (${errorSummary(error)}): ` +
    `the role needs USAGE on schema drizzle and SELECT on drizzle.__drizzle_migrations; as the role that runs \`npm run migrate\`, ` +
    `run GRANT USAGE ON SCHEMA drizzle TO ${role}; GRANT SELECT ON drizzle.__drizzle_migrations TO ${role};`
  );
}

/** The login role as an SQL identifier: postgres.js's resolved user (the URL's, PGUSER, or the OS user's). */
function quotedRole(sql: Pick<Sql, "options">): string {
  const user = (sql.options as { user?: unknown } | undefined)?.user;
  return typeof user === "string" && user !== "" ? `"${user.replaceAll('"', '""')}"` : "<DATABASE_URL's role>";
}

/** What to tell the operator of a database behind the code. */
export function behindMessage(state: Extract<SchemaState, { current: false }>): string {
  const applied = state.applied === null ? "no migration" : `migrations up to ${state.applied}`;
  return `the database has ${applied}; this code needs ${state.needed}: run \`npm run migrate\``;
}

/**
 * Says at a process's start what would otherwise show only as failing requests or jobs: a
 * database that cannot be reached yet (warn, with why and what the process does meanwhile), one
 * that refuses the process's settings (error: the database was dropped or the password changed
 * since the start's check), one behind the code (error, with the command to run), or one that
 * answers but will not show the schema version to the process's role (error, with the grant:
 * /readyz stays 503 until then, the rest works).
 */
export async function reportDatabaseAtStart(sql: Sql, logger: Logger, who: string, meanwhile: string): Promise<void> {
  let state: SchemaState;
  try {
    state = await createSchemaCheck(sql)();
  } catch (error) {
    const unreadable = migrationsTableRefusal(error, sql);
    if (unreadable) {
      logger.error(
        { code: INSUFFICIENT_PRIVILEGE },
        `${who}: ${unreadable} Until then /readyz answers 503 (it cannot tell whether the database has this code's migrations); PostgreSQL answers the process's other queries`,
      );
      return;
    }
    const refused = misconfiguredSetting(error);
    if (refused) logger.error(`${who}: ${describeRefusal(refused)} — check DATABASE_URL; ${meanwhile}`);
    else logger.warn(`${who}: PostgreSQL is not reachable yet (${errorSummary(error)}); ${meanwhile}`);
    return;
  }
  if (!state.current) logger.error(`${who}: ${behindMessage(state)}`);
}
