// The order waits ask, every 5 ms, which of some ingest batches are still open. That stays a
// lookup of those batches by id during a backlog, whatever Postgres believed of the open ones
// when it planned the statement: planned after a quiet spell (few open), it read every open
// batch through the open-batches index to find the few asked about.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDb, type Sql } from "../../src/db/client.ts";
import { openBatchesAmong } from "../../src/db/queries/pipeline.ts";
import { createTestDatabase } from "../helpers/db.ts";
import { countTableReads } from "../helpers/table-reads.ts";

let database: Awaited<ReturnType<typeof createTestDatabase>>;
let sql: Sql;

beforeAll(async () => {
  database = await createTestDatabase("open-batches-lookup");
  sql = createDb(database.url, { max: 1 }).sql;
  // A quiet spell (every batch evaluated, and autovacuum's analyze has seen it so), then a backlog.
  await sql`
    insert into ingest_batches (id, transaction_count, created_at, evaluated_at)
    select 'bat_done_' || i, 3, now() - interval '1 day', now() - interval '1 day' from generate_series(1, 20000) as i`;
  await sql`analyze ingest_batches`;
  await sql`
    insert into ingest_batches (id, transaction_count, created_at)
    select 'bat_open_' || i, 3, now() from generate_series(1, 5000) as i`;
});
afterAll(async () => {
  await sql?.end();
  await database?.drop();
});

describe("which ingest batches are still open", () => {
  it("answers the open ones among those asked, reading only those, during a backlog", async () => {
    const asked = ["bat_open_17", "bat_done_42", "bat_open_4999", "bat_missing"];
    let open: string[] = [];
    const reads = await countTableReads(sql, "ingest_batches", async (tx) => {
      open = await openBatchesAmong(tx, asked);
    });
    expect(open.sort()).toEqual(["bat_open_17", "bat_open_4999"]);
    expect(reads.seqScans).toBe(0);
    expect(reads.rowsFetchedByIndex).toBeLessThanOrEqual(asked.length);
  });
});
