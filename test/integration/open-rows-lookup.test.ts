// Look-ups of a few open rows among many (ingest batches not evaluated yet, score changes not
// evaluated yet) read those rows only, whatever Postgres believed of the open ones when it
// planned the statement: planned after a quiet spell (few open), a look-up read every open row
// through the table's open-rows index to find the few asked about, and a backlog or a large
// relabel makes them thousands. The order waits ask about batches every 5 ms; an evaluation
// locks its addresses' open score changes once per group.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDb, type Sql } from "../../src/db/client.ts";
import { openBatchesAmong } from "../../src/db/queries/pipeline.ts";
import { lockOpenScoreChanges } from "../../src/db/queries/pipeline-writes.ts";
import { unevaluatedScoreChanges } from "../../src/db/queries/reconcile.ts";
import { createTestDatabase } from "../helpers/db.ts";
import { countTableReads } from "../helpers/table-reads.ts";

let database: Awaited<ReturnType<typeof createTestDatabase>>;
let sql: Sql;

beforeAll(async () => {
  database = await createTestDatabase("open-rows-lookup");
  sql = createDb(database.url, { max: 1 }).sql;
  // A quiet spell (every batch evaluated, and autovacuum's analyze has seen it so), then a backlog.
  await sql`
    insert into ingest_batches (id, transaction_count, created_at, evaluated_at)
    select 'bat_done_' || i, 3, now() - interval '1 day', now() - interval '1 day' from generate_series(1, 20000) as i`;
  await sql`analyze ingest_batches`;
  await sql`
    insert into ingest_batches (id, transaction_count, created_at)
    select 'bat_open_' || i, 3, now() from generate_series(1, 5000) as i`;
  // Score changes likewise: 30,000 evaluated over 1,000 addresses, then a relabel opens 5,000.
  await sql`
    insert into risk_score_history (address, previous_score, score, factors, cause, created_at, evaluated_at)
    select 'addr_' || (i % 1000), 0, 10, '{}', 'transactions', now() - interval '1 day', now() - interval '1 day'
    from generate_series(1, 30000) as i`;
  await sql`analyze risk_score_history`;
  await sql`
    insert into risk_score_history (address, previous_score, score, factors, cause)
    select 'addr_' || (i % 1000), 10, 40, '{flagged_counterparty}', 'labels' from generate_series(1, 5000) as i`;
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

describe("locking the open score changes of some addresses", () => {
  it("locks those addresses' open changes, reading only those, after a large relabel", async () => {
    let locked: { address: string }[] = [];
    const reads = await countTableReads(sql, "risk_score_history", async (tx) => {
      locked = await lockOpenScoreChanges(tx as never, ["addr_7", "addr_8"]);
    });
    // 5,000 open over 1,000 addresses: five each.
    expect(locked.map((change) => change.address).sort()).toEqual([...Array(5).fill("addr_7"), ...Array(5).fill("addr_8")]);
    expect(reads.seqScans).toBe(0);
    // Those ten (and a row or so more as the lock reads them again), not the 5,000 open.
    expect(reads.rowsFetchedByIndex).toBeLessThanOrEqual(locked.length * 2);
  });

  it("gives the reconciler the oldest open changes reading the open ones only, not the evaluated history", async () => {
    let oldest: number[] = [];
    const reads = await countTableReads(sql, "risk_score_history", async (tx) => {
      oldest = await unevaluatedScoreChanges(tx, new Date(Date.now() + 60_000), 100);
    });
    expect(oldest).toHaveLength(100);
    expect(oldest).toEqual([...oldest].sort((a, b) => a - b));
    // The first open change is the first after the 30,000 evaluated ones.
    expect(oldest[0]).toBe(30_001);
    expect(reads.seqScans).toBe(0);
    expect(reads.rowsFetchedByIndex).toBeLessThanOrEqual(5_000);
  });
});
