// Another session's locks, for tests of what waits on them.
import type { TransactionSql } from "postgres";
import type { Sql } from "../../src/db/client.ts";
import { waitFor } from "./wait.ts";

/**
 * Runs `take` (statements that take locks) in a transaction on `sql` and keeps the transaction
 * open, its locks held, until the returned function ends it (calling it again is harmless).
 */
export async function holdTransaction(sql: Sql, take: (tx: TransactionSql) => Promise<unknown>): Promise<() => Promise<void>> {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let held!: () => void;
  const holding = new Promise<void>((resolve) => (held = resolve));
  const transaction = sql.begin(async (tx) => {
    await take(tx);
    held();
    await released;
  });
  // A failing `take` rejects the transaction before anything is held.
  await Promise.race([holding, transaction]);
  return async () => {
    release();
    await transaction;
  };
}

/** Waits until some session of this test's database waits on a lock (a request behind a held transaction). */
export async function waitForALockWait(sql: Sql, what = "a request to wait on the held transaction"): Promise<void> {
  await waitFor(what, async () => {
    const [row] = await sql<{ waiting: number }[]>`
      select count(*)::int as waiting from pg_stat_activity
      where datname = current_database() and wait_event_type = 'Lock'`;
    return row!.waiting > 0;
  });
}
