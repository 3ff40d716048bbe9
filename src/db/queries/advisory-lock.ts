// A Postgres advisory lock held for the rest of a transaction (released at commit or
// rollback), named by a pair of keys: shared by the many writers that may run side by side,
// exclusive for the one that must see none of them in flight.
import type { TransactionSql } from "postgres";

export type TransactionLock = {
  /** Waits while an exclusive holder runs; runs beside other shared holders. */
  share: (tx: TransactionSql) => Promise<void>;
  /** Waits for every holder under way and holds new ones back. */
  take: (tx: TransactionSql) => Promise<void>;
};

export function transactionLock(key: number, subkey = 0): TransactionLock {
  return {
    share: async (tx) => {
      await tx`select pg_advisory_xact_lock_shared(${key}, ${subkey})`;
    },
    take: async (tx) => {
      await tx`select pg_advisory_xact_lock(${key}, ${subkey})`;
    },
  };
}
