import { fileURLToPath } from "node:url";
import { migrate } from "drizzle-orm/postgres-js/migrator";
import { createDb } from "./client.ts";

export const MIGRATIONS_FOLDER = fileURLToPath(new URL("../../drizzle", import.meta.url));

/** Applies every committed migration in drizzle/ (or `migrationsFolder`) that the database has not seen yet. */
export async function runMigrations(databaseUrl: string, migrationsFolder = MIGRATIONS_FOLDER): Promise<void> {
  const { db, sql } = createDb(databaseUrl, { max: 1 });
  try {
    await migrate(db, { migrationsFolder });
  } finally {
    await sql.end({ timeout: 5 });
  }
}
