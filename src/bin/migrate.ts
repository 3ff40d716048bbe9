// npm run migrate: applies drizzle/ to DATABASE_URL; exits non-zero when anything fails, with
// one fatal line saying why. Its lines are pino JSON, as the other services' (role "migrate"):
// a migration Job's failure reaches the same log pipeline and alerts as a crashing API's. A PostgreSQL that refuses DATABASE_URL, cannot be reached or does not
// answer within 5 s ends it before anything is applied (src/db/migrate.ts). Runs at once take
// turns (an advisory lock): the later ones wait, find nothing left to apply and exit 0. A statement
// waits for a table's lock MIGRATION_LOCK_TIMEOUT at most (5 s): then the run is undone, and tried
// again twice, each time with a warn line naming the open transactions in the way.
import { loadMigrateSettings } from "../config.ts";
import { MigrationConnectError, MigrationLockTimeout, runMigrations } from "../db/migrate.ts";
import { createLogger } from "../logger.ts";
import { exitWithFatalLine, orExitLogged } from "./config-or-exit.ts";

const { databaseUrl, lockTimeoutMs } = orExitLogged(() => loadMigrateSettings());
// At info whatever LOG_LEVEL says: this command reads DATABASE_URL and MIGRATION_LOCK_TIMEOUT only, and says little.
const logger = createLogger("info");
try {
  await runMigrations(databaseUrl, undefined, undefined, {
    lockTimeoutMs,
    onWait: () => logger.info("another migration of this database is under way; waiting for it to finish"),
    onLockTimeout: (message) => logger.warn(message),
  });
  logger.info("migrations applied");
} catch (error) {
  exitWithFatalLine(`migration failed: ${failure(error as Error)}`);
}

function failure(error: Error): string {
  if (error instanceof MigrationConnectError || error instanceof MigrationLockTimeout) return error.message;
  // drizzle's "Failed query: <statement>\nparams: …", then what PostgreSQL said.
  const cause = error.cause as Error | undefined;
  return `${error.message.split("\n")[0]}${cause ? ` (${cause.message})` : ""}`;
}
