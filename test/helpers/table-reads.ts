// What a statement read of one table, as Postgres counts it (pg_stat_xact_user_tables): the
// tests that hold a hot statement to a lookup by key, whatever Postgres believed of the table
// when it planned the statement.
import { expect } from "vitest";
import type { Sql } from "../../src/db/client.ts";

export type TableReads = { seqScans: number; rowsFetchedByIndex: number };

/**
 * Runs `work` and says what Postgres read of `table` meanwhile. Counted inside one
 * transaction: a backend's counts not yet reported (those of earlier statements among them)
 * show in the view too, so the difference is what `work` read.
 */
export async function countTableReads(sql: Sql, table: string, work: (tx: Sql) => Promise<void>): Promise<TableReads> {
  return sql.begin(async (tx) => {
    const reads = async () => {
      const [row] = await tx<TableReads[]>`
        select seq_scan::int as "seqScans", coalesce(idx_tup_fetch, 0)::int as "rowsFetchedByIndex"
        from pg_stat_xact_user_tables where relname = ${table}`;
      expect(row, `no statistics for table ${table}`).toBeDefined();
      return row!;
    };
    const before = await reads();
    await work(tx as unknown as Sql);
    const after = await reads();
    return { seqScans: after.seqScans - before.seqScans, rowsFetchedByIndex: after.rowsFetchedByIndex - before.rowsFetchedByIndex };
  });
}
