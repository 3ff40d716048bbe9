// What the later migrations promise: identifiers that compare byte by byte (0003), and ingest's
// per-address counters moved out of address_state with nothing lost on the way (0004).
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MIGRATIONS_FOLDER, runMigrations } from "../../src/db/migrate.ts";
import { createTestDatabase } from "../helpers/db.ts";
import { TEST_ADMIN_DATABASE_URL, databaseUrl } from "../helpers/env.ts";

const BYTEWISE_COLUMNS = [
  ["address_state", "address"],
  ["address_activity", "address"],
  ["ingest_batches", "id"],
  ["risk_labels", "address"],
  ["transactions", "signature"],
  ["transactions", "from_address"],
  ["transactions", "to_address"],
  ["transactions", "batch_id"],
] as const;

let db: Awaited<ReturnType<typeof createTestDatabase>>;
let sql: postgres.Sql;

beforeAll(async () => {
  db = await createTestDatabase("schema-migrations");
  sql = postgres(db.url, { max: 1, onnotice: () => {} });
});

afterAll(async () => {
  await sql?.end();
  await db?.drop();
});

describe("identifier columns (0003)", () => {
  it.each(BYTEWISE_COLUMNS)('%s.%s is collated "C"', async (table, column) => {
    const [row] = await sql<{ collation: string | null }[]>`
      select collation_name as collation from information_schema.columns
      where table_schema = 'public' and table_name = ${table} and column_name = ${column}`;
    expect(row?.collation).toBe("C");
  });

  it("orders addresses by byte (upper case before lower case), so the indexes need no locale", async () => {
    await sql`insert into address_state (address) values ('b1'), ('B2'), ('a3'), ('A4')`;
    const rows = await sql<{ address: string }[]>`select address from address_state order by address`;
    expect(rows.map((row) => row.address)).toEqual(["A4", "B2", "a3", "b1"]);
  });
});

describe("address_activity (0004)", () => {
  it("carries each address's last activity and history total over from address_state", async () => {
    const name = `wa_test_upgrade_${process.pid}_${Date.now()}`;
    const admin = postgres(TEST_ADMIN_DATABASE_URL, { max: 1, onnotice: () => {} });
    const upTo0003 = mkdtempSync(join(tmpdir(), "wa-migrations-"));
    try {
      await admin.unsafe(`create database ${name}`);
      // The migrations as a database upgraded before 0004 has them.
      cpSync(MIGRATIONS_FOLDER, upTo0003, { recursive: true });
      const journalPath = join(upTo0003, "meta", "_journal.json");
      const journal = JSON.parse(readFileSync(journalPath, "utf8")) as { entries: Array<{ idx: number }> };
      writeFileSync(journalPath, JSON.stringify({ ...journal, entries: journal.entries.filter((entry) => entry.idx <= 3) }));
      await runMigrations(databaseUrl(name), upTo0003);

      const old = postgres(databaseUrl(name), { max: 1, onnotice: () => {} });
      try {
        await old`
          insert into address_state (address, risk_score, last_activity, transaction_count)
          values ('busy', 40, 1700000500, 12), ('quiet', 0, null, 0), ('scored-only', 55, null, 0)`;
        await runMigrations(databaseUrl(name));
        const activity = await old`
          select address, last_activity::float8 as "lastActivity", transaction_count::float8 as "transactionCount"
          from address_activity order by address`;
        expect(activity).toEqual([{ address: "busy", lastActivity: 1_700_000_500, transactionCount: 12 }]);
        const states = await old`select address, risk_score as "riskScore" from address_state order by address`;
        expect(states).toEqual([
          { address: "busy", riskScore: 40 },
          { address: "quiet", riskScore: 0 },
          { address: "scored-only", riskScore: 55 },
        ]);
      } finally {
        await old.end();
      }
    } finally {
      rmSync(upTo0003, { recursive: true, force: true });
      await admin.unsafe(`drop database if exists ${name} with (force)`);
      await admin.end();
    }
  });
});
