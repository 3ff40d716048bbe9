// The benchmarks' scratch databases: each benchmark works in a database of its own, on the
// Postgres that BENCH_DATABASE_ADMIN_URL names, created fresh (dropped first) and migrated.
// Fresh rather than emptied: a list of tables to empty goes stale when a migration adds one,
// and rows left from earlier runs make every later run slower than the one before.
import postgres from "postgres";
import { runMigrations } from "../../src/db/migrate.ts";

const ADMIN_URL = process.env.BENCH_DATABASE_ADMIN_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";

/** The URL of database `name` on the benchmarks' server. */
export function scratchDatabaseUrl(name: string): string {
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

/** Drops `name` if it exists, creates it, applies every migration; returns its URL. */
export async function freshScratchDatabase(name: string): Promise<string> {
  const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`drop database if exists ${plainName(name)} with (force)`);
    await admin.unsafe(`create database ${plainName(name)}`);
  } finally {
    await admin.end();
  }
  const url = scratchDatabaseUrl(name);
  await runMigrations(url);
  return url;
}

/** Names come from the benchmarks themselves; checked so that they need no quoting. */
function plainName(name: string): string {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`not a plain database name: ${name}`);
  return name;
}

/** Whether database `name` exists on the benchmarks' server. */
export async function scratchDatabaseExists(name: string): Promise<boolean> {
  const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
  try {
    return (await admin`select 1 from pg_database where datname = ${name}`).length > 0;
  } finally {
    await admin.end();
  }
}

/** Drops database `name` (a benchmark that leaves nothing behind). */
export async function dropScratchDatabase(name: string): Promise<void> {
  const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`drop database if exists ${plainName(name)} with (force)`);
  } finally {
    await admin.end();
  }
}
