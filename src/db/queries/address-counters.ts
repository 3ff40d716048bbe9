// The per-address counters that the wallet endpoints show (address_activity: the newest
// transaction's block time, and the transaction count that is the history's unfiltered
// total). They are read for tracked addresses only, so ingest keeps them for tracked
// addresses only: for the counterparties — most of the addresses a batch touches — the
// upsert would be work nobody reads (measured on ingest alone: Postgres 41–43 → 34–39 µs per
// transaction).
//
// An address that becomes tracked is counted from the stored rows. For that count to be
// exact, it must not run beside an ingest that has not committed yet: such an ingest has not
// counted the address (it was not tracked when its statement began) and its rows are not in
// the count either. So every ingest holds this lock shared, and tracking takes it exclusively
// before it counts; the ingest's statement starts after the lock is granted, so it sees a
// tracking that committed meanwhile.
import type { PendingQuery, Row, TransactionSql } from "postgres";
import { transactionLock } from "./advisory-lock.ts";

/** The counters' lock ("acti"). */
const COUNTERS_LOCK = transactionLock(0x61637469);

/** Held by every ingest until it commits: ingests run side by side, a recount waits for them. */
export const shareAddressCounters = COUNTERS_LOCK.share;

/** Held by a recount until it commits: waits for the ingests under way, holds new ones back. */
export const lockAddressCounters = COUNTERS_LOCK.take;

/** The address's rows (a self-transfer once): what its counters count. */
const historyOf = (tx: TransactionSql, address: string) => tx`
  select block_time, signature, leg from transactions where from_address = ${address}
  union all
  select block_time, signature, leg from transactions where to_address = ${address} and from_address <> ${address}`;

/**
 * A set of the address's rows, as two numbers that are equal for the same rows: how many, and
 * the sum of a 64-bit hash of each one's key (signature and leg, which the from/to indexes
 * hold). A row added and another deleted meanwhile (a back-fill beside a prune) would leave the
 * count alone, not the sum.
 */
export type RowSet = { rows: number; hash: string };

/** The rows whose block time is before `before` (an SQL expression), as a RowSet. */
const rowSetBefore = (tx: TransactionSql, before: PendingQuery<Row[]>) => tx`
  count(*) filter (where block_time < ${before})::float8 as rows,
  coalesce(sum(hashtextextended(signature, leg)) filter (where block_time < ${before}), 0)::text as hash`;

/**
 * How long before the address's newest block time its rows count as settled (HistoryMark):
 * rows stored later seldom have older block times (a back-fill does), but two feeds' deliveries
 * of the same minutes may cross.
 */
export const SETTLED_SECONDS = 600;

/** The address's rows with block times before `before` (SETTLED_SECONDS before its newest; 0 for none), as they stand. */
export type HistoryMark = RowSet & { before: number };

/**
 * Marks the address's settled rows, so that a later look (recountAddressActivity, under
 * lockAddressCounters) can tell whether they are still the same rows: a reading of its history
 * done in between, without the lock, then covers them, and only its rows from `before` on need
 * reading again (track-wallet.ts). One statement, one snapshot: the newest block time and the rows.
 */
export async function markHistory(tx: TransactionSql, address: string): Promise<HistoryMark> {
  const [mark] = await tx<HistoryMark[]>`
    with cut as (
      select coalesce(greatest(
        (select max(block_time) from transactions where from_address = ${address}),
        (select max(block_time) from transactions where to_address = ${address})
      ) - ${SETTLED_SECONDS}, 0) as before
    )
    select (select before from cut)::float8 as before, ${rowSetBefore(tx, tx`(select before from cut)`)}
    from (${historyOf(tx, address)}) history`;
  return mark!;
}

/**
 * Sets the address's counters from its stored transactions (a self-transfer counted once),
 * replacing what was there: rows left from before an earlier untracking are stale. No row
 * for an address without transactions. Call with lockAddressCounters held. Returns its rows
 * with block times before `settledBefore` (a HistoryMark's; none when null), read in the same pass.
 */
export async function recountAddressActivity(tx: TransactionSql, address: string, settledBefore: number | null = null): Promise<RowSet> {
  const [settled] = await tx<RowSet[]>`
    with totals as (
      select max(block_time) as last_activity, count(*) as transaction_count, ${rowSetBefore(tx, tx`${settledBefore}::bigint`)}
      from (${historyOf(tx, address)}) history
    ), counted as (
      insert into address_activity (address, last_activity, transaction_count)
      select ${address}, last_activity, transaction_count from totals where transaction_count > 0
      on conflict (address) do update
        set last_activity = excluded.last_activity, transaction_count = excluded.transaction_count
    )
    select rows, hash from totals`;
  return settled!;
}

/** Whether two readings of the same rows found the same set. */
export const sameRows = (a: RowSet, b: RowSet): boolean => a.rows === b.rows && a.hash === b.hash;
