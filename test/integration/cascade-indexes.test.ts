// Every foreign key that cascades a delete has an index led by its referencing columns. Without
// one, each deleted parent row makes Postgres read the whole child table to find its children:
// deleting an alert with 2,000 events over 200,000 notifications took 49 s (notifications had no
// index on event_id), holding the alert's lock while the evaluations that fire it waited.
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase } from "../helpers/db.ts";

let database: Awaited<ReturnType<typeof createTestDatabase>>;
let sql: postgres.Sql;

beforeAll(async () => {
  database = await createTestDatabase("cascade-indexes");
  sql = postgres(database.url, { max: 1, onnotice: () => {} });
});
afterAll(async () => {
  await sql?.end();
  await database?.drop();
});

describe("the migrated schema", () => {
  it("indexes the referencing columns of every foreign key that cascades a delete", async () => {
    const keys = await sql<{ name: string; child: string; columns: number[] }[]>`
      select conname as name, conrelid::regclass::text as child, conkey::int[] as columns
      from pg_constraint where contype = 'f' and confdeltype = 'c'`;
    expect(keys.length).toBeGreaterThan(0);
    const unindexed: string[] = [];
    for (const key of keys) {
      const [covered] = await sql<{ n: number }[]>`
        select count(*)::int as n from pg_index
        where indrelid = ${key.child}::regclass
          and (indkey::int[])[0:${key.columns.length - 1}] = ${key.columns}::int[]`;
      if (covered!.n === 0) unindexed.push(`${key.child} (${key.name})`);
    }
    expect(unindexed).toEqual([]);
  });
});
