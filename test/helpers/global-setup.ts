// Runs once per `vitest run`: migrates a template database that every test file clones,
// so a file gets a fresh, fully migrated database in a few milliseconds. The template is
// named per run so that two runs on one machine never drop each other's template.
import postgres from "postgres";
import type { TestProject } from "vitest/node";
import { runMigrations } from "../../src/db/migrate.ts";
import { TEST_ADMIN_DATABASE_URL, databaseUrl } from "./env.ts";

declare module "vitest" {
  export interface ProvidedContext {
    templateDatabase: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const template = `wa_template_${process.pid}`;
  const admin = () => postgres(TEST_ADMIN_DATABASE_URL, { max: 1, onnotice: () => {} });
  const sql = admin();
  try {
    await sql.unsafe(`drop database if exists ${template} with (force)`);
    await sql.unsafe(`create database ${template}`);
  } catch (error) {
    throw new Error(`PostgreSQL at ${TEST_ADMIN_DATABASE_URL} is needed by the tests: ${(error as Error).message}`, {
      cause: error,
    });
  } finally {
    await sql.end();
  }
  await runMigrations(databaseUrl(template));
  project.provide("templateDatabase", template);
  return async () => {
    const cleanup = admin();
    await cleanup.unsafe(`drop database if exists ${template} with (force)`);
    await cleanup.end();
  };
}
