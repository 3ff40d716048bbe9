// The reseed finds each tracked address's newest send by reading its sends newest first through
// transactions_from_newest_idx and stopping at the first in the window. Its order once missed
// the index's "nulls last", so Postgres read and sorted every send the address ever made
// (0.2–0.5 s for one with 120,000), while the operator keeps the evaluation workers stopped.
// What it read is counted by Postgres itself (pg_stat_xact_user_tables).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDb, type Sql } from "../../src/db/client.ts";
import { loadOlderLastSends } from "../../src/pipeline/activity-reseed-queries.ts";
import { createTestDatabase } from "../helpers/db.ts";
import { countTableReads } from "../helpers/table-reads.ts";

let database: Awaited<ReturnType<typeof createTestDatabase>>;
let sql: Sql;

const SENDS = 20_000;
/** Other addresses' transactions, so that the busy sender's are a small part of the table. */
const OTHERS = 100_000;
const FIRST_BLOCK_TIME = 1_780_000_000;

beforeAll(async () => {
  database = await createTestDatabase("reseed-last-send-plan");
  sql = createDb(database.url, { max: 1 }).sql;
  // A batch per 1,000 transactions, all evaluated.
  await sql`
    insert into ingest_batches (id, transaction_count, created_at, evaluated_at)
    select 'bat_' || b, 1000, timestamptz '2026-11-01' + b * interval '1 minute', timestamptz '2026-11-01' + b * interval '1 minute'
    from generate_series(0, ${(SENDS + OTHERS) / 1000 - 1}::int) as b`;
  await sql`
    insert into transactions (signature, type, amount, token, from_address, to_address, block_time, slot, fee, status, batch_id)
    select 'sig_' || i, 'transfer', 1, 'SOL', case when i % 6 = 0 then 'BusySender' else 'Other' || (i % 5000) end, 'Payee' || (i % 100),
           ${FIRST_BLOCK_TIME}::bigint + i, i, 0.000005, 'success', 'bat_' || (i / 1000)
    from generate_series(0, ${SENDS + OTHERS - 1}::int) as i`;
  // As autovacuum leaves a table that stopped growing: analyzed, its pages all visible.
  await sql`vacuum analyze transactions`;
  await sql`vacuum analyze ingest_batches`;
});
afterAll(async () => {
  await sql?.end();
  await database?.drop();
});

describe("the reseed's newest send of a tracked address", () => {
  it("reads the address's newest sends through the index and stops at the first in the window, not every send it made", async () => {
    const window = { from: new Date("2026-10-01T00:00:00Z"), before: new Date("2026-11-28T00:00:00Z") };
    const tracked = ["BusySender"];
    let found: Awaited<ReturnType<typeof loadOlderLastSends>> | undefined;
    const reads = await countTableReads(sql, "transactions", async (tx) => {
      found = await loadOlderLastSends(tx, tracked, window);
    });
    const newest = SENDS + OTHERS - 1 - ((SENDS + OTHERS - 1) % 6);
    expect(found?.get("BusySender")?.blockTime).toBe(FIRST_BLOCK_TIME + newest);
    expect(reads.seqScans).toBe(0);
    expect(reads.rowsFetchedByIndex).toBeLessThanOrEqual(10);
  });
});
