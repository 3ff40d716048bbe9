// What seeding one newly tracked address's activity counters reads from Postgres beyond the
// reseed's older-history queries (activity-reseed-queries.ts): its own rows of the evaluated
// batches to replay. The reseed reads whole batches, as it counts every tracked address; one
// address's rows come straight through its from/to indexes, however many other rows the
// deployment stored meanwhile.
import type { TransactionSql } from "postgres";
import type { Sql } from "../db/client.ts";
import type { BatchTransaction } from "../db/queries/pipeline.ts";

/**
 * The address's rows (either side; a self-transfer once) of the evaluated batches ingested from
 * `from` on, the newest `limit` of them, in the order the evaluation counted them: the
 * batches as evaluatedBatchesFrom orders them, and inside a batch chain order as
 * loadBatchTransactions gives it (a transaction's legs side by side).
 */
export async function loadAddressReplayRows(
  sql: Sql | TransactionSql,
  address: string,
  from: Date,
  limit: number,
): Promise<BatchTransaction[]> {
  // Timestamps are compared in SQL and never returned: drizzle, sharing the pool, turns postgres.js's date parsing off.
  return sql<BatchTransaction[]>`
    select signature, leg, type, amount, token, mint, "from", "to", "blockTime", slot, fee, status, "batchId"
    from (
      select t.signature, t.leg, t.type, t.amount::float8 as amount, t.token, t.mint, t.from_address as "from", t.to_address as "to",
             t.block_time::float8 as "blockTime", t.slot::float8 as slot, t.fee::float8 as fee, t.status, t.batch_id as "batchId",
             b.evaluated_at, b.created_at
      from (
        select * from transactions where from_address = ${address}
        union all
        select * from transactions where to_address = ${address} and from_address <> ${address}
      ) t
      join ingest_batches b on b.id = t.batch_id
      where b.evaluated_at is not null and b.created_at >= ${from.toISOString()}::timestamptz
      order by b.evaluated_at desc, b.created_at desc, b.id desc, t.block_time desc, t.slot desc, t.signature desc, t.leg desc
      limit ${limit}
    ) newest
    order by evaluated_at, created_at, "batchId", "blockTime", slot, signature, leg`;
}
