// npm run migrate: applies drizzle/ to DATABASE_URL; exits non-zero when anything fails, with
// one line saying why. A PostgreSQL that refuses DATABASE_URL, cannot be reached or does not
// answer within 5 s ends it before anything is applied (src/db/migrate.ts). Runs at once take
// turns (an advisory lock): the later ones wait, find nothing left to apply and exit 0.
import { loadDatabaseUrl } from "../config.ts";
import { MigrationConnectError, runMigrations } from "../db/migrate.ts";
import { orExit } from "./config-or-exit.ts";

const databaseUrl = orExit(() => loadDatabaseUrl());
try {
  await runMigrations(databaseUrl, undefined, undefined, {
    onWait: () => console.log("another migration of this database is under way; waiting for it to finish"),
  });
  console.log("migrations applied");
} catch (error) {
  console.error(`migration failed: ${failure(error as Error)}`);
  process.exit(1);
}

function failure(error: Error): string {
  if (error instanceof MigrationConnectError) return error.message;
  // drizzle's "Failed query: <statement>\nparams: …", then what PostgreSQL said.
  const cause = error.cause as Error | undefined;
  return `${error.message.split("\n")[0]}${cause ? ` (${cause.message})` : ""}`;
}
