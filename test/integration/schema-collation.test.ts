// The identifiers the pipeline inserts and looks up in bulk compare byte by byte, whatever the
// database's default collation (migration 0003): a locale's collation would make every index
// comparison a strcoll. Checked on the migrated schema, and by what the order means.
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase } from "../helpers/db.ts";

const BYTEWISE_COLUMNS = [
  ["address_state", "address"],
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
  db = await createTestDatabase("schema-collation");
  sql = postgres(db.url, { max: 1, onnotice: () => {} });
});

afterAll(async () => {
  await sql?.end();
  await db?.drop();
});

describe("identifier columns", () => {
  it.each(BYTEWISE_COLUMNS)("%s.%s is collated \"C\"", async (table, column) => {
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
