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

/**
 * An exclusive lock per owner (the caller's token sub), held for the rest of a transaction: one
 * owner's creates of a capped kind run one at a time, so that a count and the insert after it
 * cannot both take the last slot. The subkey is a hash of the owner, so two owners with the same
 * hash merely wait for each other.
 */
export function ownerLock(namespace: number): (tx: TransactionSql, owner: string) => Promise<void> {
  return async (tx, owner) => {
    await tx`select pg_advisory_xact_lock(${namespace}, hashtext(${owner}))`;
  };
}
