// npm run migrate: applies drizzle/ to DATABASE_URL; exits non-zero when anything fails.
import { loadDatabaseUrl } from "../config.ts";
import { runMigrations } from "../db/migrate.ts";

try {
  await runMigrations(loadDatabaseUrl());
  console.log("migrations applied");
} catch (error) {
  const cause = (error as Error).cause as Error | undefined;
  console.error(`migration failed: ${(error as Error).message.split("\n")[0]}${cause ? ` (${cause.message})` : ""}`);
  process.exit(1);
}
