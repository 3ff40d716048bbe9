// Two `npm run migrate` at once on a fresh database (each replica's init container or entrypoint
// migrating, a common Kubernetes and compose pattern): they take turns on an advisory lock, the
// second finds nothing left to apply, and both exit 0. drizzle's migrate takes no lock: both read
// "nothing applied yet" and applied everything, and the second failed on a catalog key
// (`duplicate key value violates unique constraint "pg_type_typname_nsp_index"`) with exit 1.
//
// The test holds the two runs at the same point, deterministically: it creates drizzle's own
// bookkeeping table (empty: nothing is applied) and locks it, so that a run reading it waits;
// once both runs wait on a lock (the table, or the other run's advisory lock), it lets go.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import postgres from "postgres";
import { describe, expect, it } from "vitest";
import { createTestDatabase } from "../helpers/db.ts";
import { exited } from "../helpers/pipeline.ts";
import { waitFor } from "../helpers/wait.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
/** Start-up (tsx, on two shared cores) and every migration on an empty database, generously. */
const BOUND_MS = 90_000;

function migrate(databaseUrl: string) {
  const child = spawn(process.execPath, ["--import", "tsx", "src/bin/migrate.ts"], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: databaseUrl },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  return { child, done: exited(child).then((exit) => ({ exit, stdout, stderr })) };
}

/** Each of the command's lines (pino JSON, every one of them), by level and message. */
const messages = (stdout: string) =>
  stdout
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => {
      const { level, msg } = JSON.parse(line) as { level: number; msg: string };
      return { level, msg };
    });

describe("two npm run migrate at once on a fresh database", () => {
  it("both exit 0: the second waits for the first and finds nothing left to apply", { timeout: BOUND_MS + 30_000 }, async () => {
    const database = await createTestDatabase("migrate-concurrent", { empty: true });
    const sql = postgres(database.url, { max: 2, onnotice: () => {} });
    const runs: Array<ReturnType<typeof migrate>> = [];
    try {
      // drizzle's own table, as it creates it: nothing applied yet.
      await sql`create schema drizzle`;
      await sql`create table drizzle.__drizzle_migrations (id serial primary key, hash text not null, created_at bigint)`;
      const holder = await sql.reserve();
      try {
        await holder`begin`;
        await holder`lock table drizzle.__drizzle_migrations in access exclusive mode`;
        runs.push(migrate(database.url), migrate(database.url));
        await waitFor(
          "both runs to wait on a lock",
          async () => {
            const [row] = await sql<{ waiting: number }[]>`
              select count(*)::int as waiting from pg_stat_activity
              where datname = current_database() and wait_event_type = 'Lock' and application_name = 'wallet-alerts'`;
            return row!.waiting === 2;
          },
          BOUND_MS,
        );
        await holder`commit`;
      } finally {
        holder.release();
      }
      const outcomes = await Promise.all(runs.map((run) => run.done));
      for (const outcome of outcomes) {
        expect(outcome.exit, outcome.stderr).toEqual({ code: 0, signal: null });
        expect(outcome.stderr).toBe("");
        expect(messages(outcome.stdout).at(-1)).toEqual({ level: 30, msg: "migrations applied" });
      }
      // One of them was told that it waits for the other.
      const waited = { level: 30, msg: "another migration of this database is under way; waiting for it to finish" };
      expect(outcomes.filter((o) => messages(o.stdout).some((line) => line.msg === waited.msg && line.level === waited.level))).toHaveLength(1);
      const journal = JSON.parse(readFileSync(new URL("../../drizzle/meta/_journal.json", import.meta.url), "utf8")) as { entries: unknown[] };
      const [applied] = await sql<{ count: number }[]>`select count(*)::int as count from drizzle.__drizzle_migrations`;
      expect(applied!.count).toBe(journal.entries.length);
    } finally {
      for (const run of runs) run.child.kill("SIGKILL");
      await Promise.all(runs.map((run) => run.done));
      await sql.end();
      await database.drop();
    }
  });
});
