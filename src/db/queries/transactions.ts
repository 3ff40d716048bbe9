// Transactions: the batch insert of ingest and the per-address history.
//
// An address's history is the union of two index-ordered scans (transactions_from_newest_idx
// and transactions_to_newest_idx), each cut at offset + limit rows and merged (Merge Append,
// no sort), so a page costs O(offset + limit) whatever the address's total. A self-transfer
// (from = to) is taken from the "from" side only, so it is listed once. The ORDER BY spells
// out NULLS LAST because the indexes were built that way; plain DESC means NULLS FIRST and
// would not match them. The unfiltered total is address_activity.transaction_count, kept by
// ingest in the same statement that stores the rows (for tracked addresses, the only ones
// whose history is listed: see address-counters.ts); a filtered total is counted with
// index-only scans: from-side + to-side − self-transfers (a BitmapAnd of both indexes).
import type { PendingQuery, Row } from "postgres";
import type { Transaction, TransactionType } from "../../domain/types.ts";
import type { Sql } from "../client.ts";
import { shareAddressCounters } from "./address-counters.ts";

/** A stored transaction as the history lists it (the mint is not part of the interface's shape). */
export type TransactionRow = Omit<Transaction, "mint"> & { mint: string | null };

export type HistoryFilter = {
  address: string;
  type?: TransactionType | undefined;
  /** Unix seconds, inclusive. */
  startTime?: number | undefined;
  endTime?: number | undefined;
  /** Only the movements of this chain transaction (the primary key's first column finds them). */
  signature?: string | undefined;
};

function filters(sql: Sql, filter: HistoryFilter): PendingQuery<Row[]> {
  return sql`
    ${filter.type ? sql`and type = ${filter.type}` : sql``}
    ${filter.startTime !== undefined ? sql`and block_time >= ${filter.startTime}` : sql``}
    ${filter.endTime !== undefined ? sql`and block_time <= ${filter.endTime}` : sql``}
    ${filter.signature !== undefined ? sql`and signature = ${filter.signature}` : sql``}`;
}

/** One page, newest first (blockTime desc, slot desc, signature, leg), and the count of all matches. */
export async function listAddressTransactions(
  sql: Sql,
  filter: HistoryFilter,
  page: { offset: number; limit: number },
): Promise<{ rows: TransactionRow[]; total: number }> {
  const where = filters(sql, filter);
  const reach = page.offset + page.limit;
  // Unfiltered, the total is the counter that ingest keeps in address_activity; filtered, it is counted.
  const unfiltered = filter.type === undefined && filter.startTime === undefined && filter.endTime === undefined && filter.signature === undefined;
  const total = unfiltered
    ? sql`select coalesce((select transaction_count::float8 from address_activity where address = ${filter.address}), 0)`
    : countQuery(sql, filter.address, where);
  const rows = await sql<(TransactionRow & { total: number })[]>`
    select signature, type, amount::float8 as amount, token, mint, from_address as "from", to_address as "to",
           block_time::float8 as "blockTime", slot::float8 as slot, fee::float8 as fee, status,
           (${total}) as total
    from (
      (select * from transactions where from_address = ${filter.address} ${where}
       order by block_time desc nulls last, slot desc nulls last, signature, leg limit ${reach})
      union all
      (select * from transactions where to_address = ${filter.address} and from_address <> ${filter.address} ${where}
       order by block_time desc nulls last, slot desc nulls last, signature, leg limit ${reach})
    ) history
    order by history.block_time desc nulls last, history.slot desc nulls last, history.signature, history.leg
    limit ${page.limit} offset ${page.offset}`;
  if (rows.length > 0) return { rows: rows.map(({ total: _total, ...row }) => row), total: rows[0]!.total };
  // An empty page (past the end, or nothing matches) carries no row to read the total from.
  const [count] = await sql<{ total: number }[]>`select (${total}) as total`;
  return { rows: [], total: count?.total ?? 0 };
}

function countQuery(sql: Sql, address: string, where: PendingQuery<Row[]>): PendingQuery<Row[]> {
  return sql`
    select ((select count(*) from transactions where from_address = ${address} ${where})
          + (select count(*) from transactions where to_address = ${address} ${where})
          - (select count(*) from transactions where to_address = ${address} and from_address = ${address} ${where}))::float8`;
}

/**
 * Inserts the batch in one statement (in a transaction that holds the counters' lock shared):
 * new rows tagged with batchId, the ingest_batches row when at least one row is new, and the
 * counters of each tracked address (address_activity: last_activity moved forward,
 * transaction_count added to: it counts rows, as the history lists them). A chain
 * transaction is stored whole or not at all: its leg 0 claims the signature, and when that is
 * stored already (an earlier delivery, or native ingest) none of its legs is added. Legs are
 * numbered by position, so a replay that reports one more transfer would otherwise store a leg
 * twice under new numbers, and a leg stored in a later batch would count the transaction again
 * in the activity counters. Returns how many rows were new, and how many chain transactions:
 * their leg 0 rows, since every transaction has one.
 */
// Amounts travel as text[]: drizzle, sharing this postgres.js client, replaces its numeric[]
// serializer with a pass-through, and text keeps every digit that JSON gave us anyway.
export async function insertTransactionBatch(
  sql: Sql,
  batchId: string,
  txs: readonly Transaction[],
): Promise<{ rows: number; transactions: number }> {
  const column = <T>(pick: (tx: Transaction) => T) => txs.map(pick);
  // Only a Helius batch has legs beyond 0; without any, the incoming rows are read by one insert
  // alone, so Postgres need not keep them for a second.
  const hasOtherLegs = txs.some((tx) => (tx.leg ?? 0) > 0);
  return sql.begin(async (transaction) => {
    await shareAddressCounters(transaction);
    const others = hasOtherLegs
      ? transaction`
        insert into transactions (signature, leg, type, amount, token, mint, from_address, to_address, block_time, slot, fee, status, batch_id)
        select signature, leg, type, amount, token, mint, from_address, to_address, block_time, slot, fee, status, ${batchId}
        from incoming where leg > 0 and signature in (select signature from principals)
        on conflict (signature, leg) do nothing
        returning signature, leg, from_address, to_address, block_time`
      : transaction`select signature, leg, from_address, to_address, block_time from principals where false`;
    const [result] = await transaction<{ rows: number; transactions: number }[]>`
      with incoming as (
        select * from unnest(
          ${column((tx) => tx.signature)}::text[], ${column((tx) => tx.leg ?? 0)}::smallint[],
          ${column((tx) => tx.type)}::text[],
          ${column((tx) => String(tx.amount))}::text[]::numeric[], ${column((tx) => tx.token)}::text[],
          ${column((tx) => tx.mint ?? null)}::text[], ${column((tx) => tx.from)}::text[],
          ${column((tx) => tx.to)}::text[], ${column((tx) => tx.blockTime)}::bigint[],
          ${column((tx) => tx.slot)}::bigint[], ${column((tx) => String(tx.fee))}::text[]::numeric[],
          ${column((tx) => tx.status)}::text[]
        ) as t(signature, leg, type, amount, token, mint, from_address, to_address, block_time, slot, fee, status)
      ),
      principals as (
        insert into transactions (signature, leg, type, amount, token, mint, from_address, to_address, block_time, slot, fee, status, batch_id)
        select signature, leg, type, amount, token, mint, from_address, to_address, block_time, slot, fee, status, ${batchId}
        from incoming where leg = 0
        on conflict (signature, leg) do nothing
        returning signature, leg, from_address, to_address, block_time
      ),
      others as (${others}),
      inserted as (select * from principals union all select * from others),
      batch as (
        insert into ingest_batches (id, transaction_count)
        select ${batchId}, count(*) from inserted having count(*) > 0
      ),
      activity as (
        insert into address_activity (address, last_activity, transaction_count)
        select address, max(block_time), count(*) from (
          select from_address as address, block_time from inserted
          union all
          select to_address, block_time from inserted where to_address <> from_address
        ) seen
        where address in (select address from tracked_wallets)
        group by address
        order by address
        on conflict (address) do update
          set last_activity = greatest(address_activity.last_activity, excluded.last_activity),
              transaction_count = address_activity.transaction_count + excluded.transaction_count
      )
      select count(*)::int as rows, (count(*) filter (where leg = 0))::int as transactions from inserted`;
    return { rows: result?.rows ?? 0, transactions: result?.transactions ?? 0 };
  });
}
