// An upgrade's test: a database migrated up to an earlier migration only, as a deployment that
// upgraded before the later ones has it, to seed and then migrate the rest of the way.
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { expect } from "vitest";
import { MIGRATIONS_FOLDER, runMigrations } from "../../src/db/migrate.ts";
import { TEST_ADMIN_DATABASE_URL, databaseUrl } from "./env.ts";

/**
 * Runs `check` against a database migrated up to migration `lastIdx` only; `check` seeds it,
 * runs the rest (`upgrade`, or a command of its own on `url`), and looks. `nextTag`: the migration right after `lastIdx` must be
 * that one (a test of one migration that a later renumbering would silently point elsewhere).
 */
export async function fromDatabaseMigratedUpTo(
  lastIdx: number,
  check: (old: postgres.Sql, upgrade: () => Promise<void>, url: string) => Promise<void>,
  options: { nextTag?: string; connections?: number } = {},
) {
  const name = `wa_test_upgrade_${process.pid}_${Date.now()}`;
  const admin = postgres(TEST_ADMIN_DATABASE_URL, { max: 1, onnotice: () => {} });
  const earlier = mkdtempSync(join(tmpdir(), "wa-migrations-"));
  try {
    await admin.unsafe(`create database ${name}`);
    cpSync(MIGRATIONS_FOLDER, earlier, { recursive: true });
    const journalPath = join(earlier, "meta", "_journal.json");
    const journal = JSON.parse(readFileSync(journalPath, "utf8")) as { entries: Array<{ idx: number; tag: string }> };
    if (options.nextTag !== undefined) expect(journal.entries.find((entry) => entry.idx === lastIdx + 1)?.tag).toBe(options.nextTag);
    writeFileSync(journalPath, JSON.stringify({ ...journal, entries: journal.entries.filter((entry) => entry.idx <= lastIdx) }));
    await runMigrations(databaseUrl(name), earlier);
    const old = postgres(databaseUrl(name), { max: options.connections ?? 1, onnotice: () => {} });
    try {
      await check(old, () => runMigrations(databaseUrl(name)), databaseUrl(name));
    } finally {
      await old.end();
    }
  } finally {
    rmSync(earlier, { recursive: true, force: true });
    await admin.unsafe(`drop database if exists ${name} with (force)`);
    await admin.end();
  }
}
