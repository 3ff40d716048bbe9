// npm run migrate behind an old process's open transaction on a table a pending migration alters
// (0027's ALTER TABLE notifications, behind an old worker's evaluation). Without a lock timeout
// the ALTER TABLE waited for that transaction, and every later read and write of notifications
// queued behind the ALTER TABLE (a plain read waited 9 s): the upgrade stalled the running
// service. Now each statement waits MIGRATION_LOCK_TIMEOUT at most, the run is undone and tried
// again, and at last the command exits 1 naming the cause and what to do.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import type postgres from "postgres";
import { describe, expect, it } from "vitest";
import { fromDatabaseMigratedUpTo } from "../helpers/migrated-up-to.ts";
import { exitWithin } from "../helpers/pipeline.ts";
import { waitFor } from "../helpers/wait.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
/** Start-up (tsx, on two shared cores), three waits of 1 s and two pauses, generously. */
const BOUND_MS = 60_000;
const ALTER = 'ALTER TABLE "notifications" ADD COLUMN IF NOT EXISTS "list_seq" bigint DEFAULT 0 NOT NULL';

/** npm run migrate on `databaseUrl` with a lock timeout of 1 s; its lines as they come. */
function migrate(databaseUrl: string) {
  const child = spawn(process.execPath, ["--import", "tsx", "src/bin/migrate.ts"], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: databaseUrl, MIGRATION_LOCK_TIMEOUT: "1s" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const lines = () =>
    stdout
      .split("\n")
      .filter((line) => line !== "")
      .map((line) => {
        const { level, msg } = JSON.parse(line) as { level: number; msg: string };
        return { level, msg };
      });
  return { lines, stderr: () => stderr, done: exitWithin(child, BOUND_MS) };
}

/** An old worker's evaluation: a transaction that has read notifications and stays open. */
async function openTransactionOnNotifications(old: postgres.Sql) {
  const holder = await old.reserve();
  await holder`begin`;
  await holder`select count(*) from notifications`;
  const [row] = await holder<{ pid: number }[]>`select pg_backend_pid() as pid`;
  return { pid: row!.pid, end: async () => (await holder`commit`, holder.release()) };
}

const listSeqColumns = async (old: postgres.Sql) =>
  (await old<{ n: number }[]>`
    select count(*)::int as n from information_schema.columns
    where table_name = 'notifications' and column_name = 'list_seq'`)[0]!.n;

describe("npm run migrate behind an open transaction on a table it alters", () => {
  it(
    "gives way within the lock timeout so later reads go on, tries three times, and exits 1 naming the blocking session; nothing is applied",
    { timeout: BOUND_MS + 30_000 },
    async () => {
      await fromDatabaseMigratedUpTo(
        26,
        async (old, _upgrade, url) => {
          const holder = await openTransactionOnNotifications(old);
          try {
            const run = migrate(url);
            await waitFor(
              "the migration to wait for notifications' lock",
              async () =>
                (
                  await old<{ n: number }[]>`
                    select count(*)::int as n from pg_stat_activity
                    where datname = current_database() and wait_event_type = 'Lock' and application_name = 'wallet-alerts'`
                )[0]!.n === 1,
              BOUND_MS,
            );
            // Queued behind the migration's ALTER TABLE: it ends while the old transaction is
            // still open, once the migration gives way (without a bound it waited for the old one).
            const [read] = await old<{ n: number }[]>`select count(*)::int as n from notifications`;
            expect(read!.n).toBe(0);
            const exit = await run.done;
            expect(exit, run.lines().map((line) => line.msg).join("\n")).toEqual({ code: 1, signal: null });
            expect(run.stderr()).toBe("");
            const waited = `a migration's statement waited 1 s for a lock (SQLSTATE 55P03 lock_not_available) at ${ALTER}; open transactions holding table locks: pid ${holder.pid} (`;
            const lines = run.lines();
            expect(lines).toHaveLength(3);
            expect(lines.map((line) => line.level)).toEqual([40, 40, 60]);
            expect(lines[0]!.msg).toContain(waited);
            expect(lines[0]!.msg).toMatch(/nothing applied, trying again \(attempt 2 of 3\)$/);
            expect(lines[1]!.msg).toMatch(/nothing applied, trying again \(attempt 3 of 3\)$/);
            expect(lines[2]!.msg.startsWith(`migration failed: ${waited}`)).toBe(true);
            expect(lines[2]!.msg).toMatch(
              /; gave up after 3 attempts, nothing applied — end those transactions \(stop the previous version's processes\) or raise MIGRATION_LOCK_TIMEOUT, then run npm run migrate again$/,
            );
          } finally {
            await holder.end();
          }
          expect(await listSeqColumns(old)).toBe(0);
        },
        { nextTag: "0027_alert-notification-list", connections: 3 },
      );
    },
  );

  it("applies the migration on a later attempt once the open transaction ends", { timeout: BOUND_MS + 30_000 }, async () => {
    await fromDatabaseMigratedUpTo(
      26,
      async (old, _upgrade, url) => {
        const holder = await openTransactionOnNotifications(old);
        let run: ReturnType<typeof migrate>;
        try {
          run = migrate(url);
          await waitFor("the first attempt to give way", async () => run.lines().some((line) => line.level === 40), BOUND_MS);
        } finally {
          await holder.end();
        }
        const exit = await run.done;
        expect(exit, run.lines().map((line) => line.msg).join("\n")).toEqual({ code: 0, signal: null });
        expect(run.lines().at(-1)).toEqual({ level: 30, msg: "migrations applied" });
        expect(await listSeqColumns(old)).toBe(1);
      },
      { nextTag: "0027_alert-notification-list", connections: 2 },
    );
  });
});
