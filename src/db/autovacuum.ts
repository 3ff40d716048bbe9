// Whether PostgreSQL's autovacuum runs for the service's database. The service deletes and
// updates rows all the time (every notification is written again when it is delivered, the
// Retention script deletes a horizon's worth a day), and only vacuum makes their space reusable
// and keeps the visibility map and the planner's statistics current. With autovacuum off nothing
// does: a soak test at 300 transactions/s grew the database 1.4 GB an hour with the Retention
// script run every 2 minutes, and the history counts (index-only scans, which need the visibility
// map) and the deliveries' joins (planned from statistics) slow down as the tables grow. Nothing
// fails outright, so nobody noticed: a process now says so at start, and the API's /metrics
// serves it (wallet_alerts_postgres_autovacuum_off) for an alerting rule.
//
// Autovacuum needs two settings: `autovacuum` itself (server-wide, postgresql.conf or ALTER
// SYSTEM) and `track_counts` (which may also be set per database or role): without the counts
// it gathers, autovacuum never learns that a table has dead rows, and never visits it.
import { errorSummary } from "../dependency-errors.ts";
import type { Logger } from "../logger.ts";
import { withTimeout } from "../with-timeout.ts";
import type { Sql } from "./client.ts";

/** The settings as the service's own sessions see them (`on` / `off`, as SHOW prints them). */
export type AutovacuumSettings = { autovacuum: string; trackCounts: string };

/** How long the start's read waits: a PostgreSQL that does not answer is said by another line. */
const READ_TIMEOUT_MS = 5_000;

export async function readAutovacuumSettings(sql: Sql): Promise<AutovacuumSettings> {
  const [row] = await sql<{ autovacuum: string; trackCounts: string }[]>`
    select current_setting('autovacuum') as autovacuum, current_setting('track_counts') as "trackCounts"`;
  if (!row) throw new Error("PostgreSQL returned no row for current_setting()");
  return row;
}

/** The settings that keep autovacuum from running, by name; none when it runs. */
export function autovacuumBlockers(settings: AutovacuumSettings): string[] {
  const blockers: string[] = [];
  if (settings.autovacuum !== "on") blockers.push("autovacuum");
  if (settings.trackCounts !== "on") blockers.push("track_counts");
  return blockers;
}

/** What turns each setting back on: autovacuum is server-wide; track_counts may be set per database or role too. */
const REMEDIES: Readonly<Record<string, string>> = {
  autovacuum: "set autovacuum = on in postgresql.conf (or the provider's parameters) and reload",
  track_counts: "set track_counts = on in postgresql.conf and reload, and RESET it wherever ALTER DATABASE or ALTER ROLE set it off",
};

/** The operator's line for settings that keep autovacuum from running; undefined when it runs. */
export function autovacuumWarning(settings: AutovacuumSettings): string | undefined {
  const blockers = autovacuumBlockers(settings);
  if (blockers.length === 0) return undefined;
  const named = blockers.map((name) => `${name} = off`).join(" and ");
  const blind = blockers.includes("autovacuum") ? "" : " (autovacuum finds no table to clean without the counts it gathers)";
  return (
    `PostgreSQL runs with ${named}${blind}: nothing reclaims the rows the service deletes and updates, so the database ` +
    `grows without bound even with the Retention script (1.4 GB an hour at 300 transactions/s in a soak test), and the ` +
    `history counts and deliveries slow down as the tables' visibility map and statistics go stale; ` +
    `${blockers.map((name) => REMEDIES[name]).join("; ")} (README: Production settings for Redis and PostgreSQL)`
  );
}

/**
 * Says at a process's start whether autovacuum runs: one warn line when it does not, a debug
 * line when it does. Never throws: a PostgreSQL that cannot be read now must not stop a process
 * that would otherwise wait for it (its own line says it is not reachable; /metrics tells the
 * setting once it can be read).
 */
export async function reportAutovacuumAtStart(sql: Sql, logger: Logger, who: string): Promise<void> {
  let settings: AutovacuumSettings;
  try {
    settings = await withTimeout(() => readAutovacuumSettings(sql), READ_TIMEOUT_MS, "PostgreSQL");
  } catch (error) {
    logger.debug(`${who}: could not read PostgreSQL's autovacuum settings at start (${errorSummary(error)}); /metrics says them once it can`);
    return;
  }
  const postgresSettings = { autovacuum: settings.autovacuum, track_counts: settings.trackCounts };
  const warning = autovacuumWarning(settings);
  if (warning) logger.warn({ postgresSettings }, `${who}: ${warning}`);
  else logger.debug({ postgresSettings }, `${who}: PostgreSQL's autovacuum runs`);
}
