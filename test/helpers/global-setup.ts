// Runs once per `vitest run`: migrates a template database that every test file clones,
// so a file gets a fresh, fully migrated database in a few milliseconds.
import postgres from "postgres";
import { runMigrations } from "../../src/db/migrate.ts";
import { TEMPLATE_DATABASE, TEST_ADMIN_DATABASE_URL, databaseUrl } from "./env.ts";

export default async function setup(): Promise<void> {
  const admin = postgres(TEST_ADMIN_DATABASE_URL, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`drop database if exists ${TEMPLATE_DATABASE} with (force)`);
    await admin.unsafe(`create database ${TEMPLATE_DATABASE}`);
  } catch (error) {
    throw new Error(`PostgreSQL at ${TEST_ADMIN_DATABASE_URL} is needed by the tests: ${(error as Error).message}`, {
      cause: error,
    });
  } finally {
    await admin.end();
  }
  await runMigrations(databaseUrl(TEMPLATE_DATABASE));
}
