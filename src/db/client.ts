import postgres from "postgres";
import { drizzle, type PostgresJsDatabase } from "drizzle-orm/postgres-js";
import * as schema from "./schema.ts";

export type Database = PostgresJsDatabase<typeof schema>;
export type Sql = postgres.Sql;

export type DbOptions = { max?: number; onnotice?: (notice: unknown) => void };

/** One postgres.js pool and the drizzle view of it; `sql` is there for the hot paths. */
export function createDb(url: string, options: DbOptions = {}): { db: Database; sql: Sql } {
  const sql = postgres(url, {
    max: options.max ?? 10,
    onnotice: options.onnotice ?? (() => {}),
    connection: { application_name: "wallet-alerts" },
  });
  return { db: drizzle(sql, { schema }), sql };
}
