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
import type { TransactionSql } from "postgres";
import { transactionLock } from "./advisory-lock.ts";

/** The counters' lock ("acti"). */
const COUNTERS_LOCK = transactionLock(0x61637469);

/** Held by every ingest until it commits: ingests run side by side, a recount waits for them. */
export const shareAddressCounters = COUNTERS_LOCK.share;

/** Held by a recount until it commits: waits for the ingests under way, holds new ones back. */
export const lockAddressCounters = COUNTERS_LOCK.take;

/**
 * Sets the address's counters from its stored transactions (a self-transfer counted once),
 * replacing what was there: rows left from before an earlier untracking are stale. No row
 * for an address without transactions. Call with lockAddressCounters held.
 */
export async function recountAddressActivity(tx: TransactionSql, address: string): Promise<void> {
  await tx`
    insert into address_activity (address, last_activity, transaction_count)
    select ${address}, max(block_time), count(*)
    from (
      select block_time from transactions where from_address = ${address}
      union all
      select block_time from transactions where to_address = ${address} and from_address <> ${address}
    ) history
    having count(*) > 0
    on conflict (address) do update
      set last_activity = excluded.last_activity, transaction_count = excluded.transaction_count`;
}
