// The evaluation reads the risk_score_increase alerts of the addresses whose scores it changed
// inside its writing transaction, once per group: it must read those wallets' alerts only,
// whatever Postgres believed of the alerts table when it planned the statement. Planned on a
// table filled since its last analyze, the join read every alert (bench:latency, 100,000
// alerts: detection p50 122 ms against 38 ms), and JIT compiled such statements on top.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDb, type Sql } from "../../src/db/client.ts";
import { loadScoreAlerts } from "../../src/db/queries/pipeline.ts";
import type { TransactionSql } from "postgres";
import { createTestDatabase } from "../helpers/db.ts";
import { countTableReads } from "../helpers/table-reads.ts";

let database: Awaited<ReturnType<typeof createTestDatabase>>;
let sql: Sql;
const WALLETS = 10_000;

beforeAll(async () => {
  database = await createTestDatabase("score-alerts-lookup");
  sql = createDb(database.url, { max: 1 }).sql;
  // Never analyzed, as tables filled since their last analyze are (autovacuum's comes later).
  await sql`
    insert into tracked_wallets (id, owner, address)
    select 'wal_' || i, 'owner', 'address' || i from generate_series(1, ${WALLETS}) as i`;
  await sql`
    insert into alerts (id, owner, wallet_id, condition, threshold, notification_method, baseline_score)
    select 'alr_' || i || '_' || k, 'owner', 'wal_' || i,
           case when k <= 2 then 'risk_score_increase' else 'large_transfer' end, 10, 'email', 0
    from generate_series(1, ${WALLETS}) as i, generate_series(1, 10) as k`;
});
afterAll(async () => {
  await sql.end();
  await database.drop();
});

describe("the score alerts of an evaluation's changed addresses", () => {
  it("are read wallet by wallet, not by reading every alert", async () => {
    let found = 0;
    const reads = await countTableReads(sql, "alerts", async (tx) => {
      found = (await loadScoreAlerts(tx as unknown as TransactionSql, ["address7", "address42"])).length;
    });
    expect(found).toBe(4);
    expect(reads.seqScans).toBe(0);
    // The two wallets' ten alerts each.
    expect(reads.rowsFetchedByIndex).toBeLessThanOrEqual(20);
  });

  it("run in sessions that never JIT-compile a statement", async () => {
    const [row] = await sql<{ jit: string }[]>`select current_setting('jit') as jit`;
    expect(row!.jit).toBe("off");
  });
});
