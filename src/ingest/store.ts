// Storing what the chain sources report. Postgres first, then the queue (the outbox order):
// a batch whose job cannot be enqueued stays stored, unevaluated, and the reconciler
// enqueues it later; a repeated batch stores nothing and enqueues nothing.
import type { Deps } from "../deps.ts";
import type { Transaction } from "../domain/types.ts";
import { replaceAccountSnapshots } from "../db/queries/accounts.ts";
import { insertTransactionBatch } from "../db/queries/transactions.ts";
import { newId } from "../ids.ts";
import { EVALUATE_JOB_OPTIONS, QUEUES, type EvaluateBatchJob } from "../queue/names.ts";
import type { AccountSnapshot } from "./native.ts";

export type StoredBatch = { accepted: number; duplicates: number; batchId: string | null };

/**
 * Stores the chain transactions not stored yet as one new batch and enqueues its evaluation.
 * A transaction is given as its leg 0 row and any further legs, and is stored whole or not at
 * all (see insertTransactionBatch): `accepted` counts those new, `duplicates` every other one
 * (already stored, or a repeat of a (signature, leg) earlier in `txs`: the first one given
 * wins), so accepted + duplicates = the leg 0 rows in `txs`.
 * Throws when Postgres fails (nothing stored) or when the enqueue fails (rows stored).
 */
export async function storeTransactionBatch(
  deps: Pick<Deps, "sql" | "queues">,
  txs: Transaction[],
): Promise<{ accepted: number; duplicates: number; batchId: string | null }> {
  const given = txs.filter((tx) => (tx.leg ?? 0) === 0).length;
  const unique = uniqueByKey(txs);
  if (unique.length === 0) return { accepted: 0, duplicates: given, batchId: null };
  const batchId = newId("bat");
  const inserted = await retryOnDeadlock(() => insertTransactionBatch(deps.sql, batchId, unique));
  if (inserted.rows === 0) return { accepted: 0, duplicates: given, batchId: null };
  const job: EvaluateBatchJob = { batchId };
  await deps.queues[QUEUES.transactions].add("evaluate", job, { ...EVALUATE_JOB_OPTIONS, jobId: batchId });
  return { accepted: inserted.transactions, duplicates: given - inserted.transactions, batchId };
}

/** Replaces the snapshots of the given addresses (each given once) in one transaction. */
export async function storeAccountSnapshots(deps: Pick<Deps, "sql">, accounts: readonly AccountSnapshot[]): Promise<number> {
  const ordered = [...accounts].sort((a, b) => compareText(a.address, b.address));
  await retryOnDeadlock(() => replaceAccountSnapshots(deps.sql, ordered));
  return accounts.length;
}

/** One per (signature, leg), first wins, in key order so concurrent batches lock rows alike. */
function uniqueByKey(txs: readonly Transaction[]): Transaction[] {
  const byKey = new Map<string, Transaction>();
  for (const tx of txs) {
    const key = `${tx.signature} ${tx.leg ?? 0}`;
    if (!byKey.has(key)) byKey.set(key, tx);
  }
  return [...byKey.values()].sort((a, b) => compareText(a.signature, b.signature) || (a.leg ?? 0) - (b.leg ?? 0));
}

// Any fixed order will do to avoid lock-order deadlocks; this is the C collation's.
const compareText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

const DEADLOCK = "40P01";
const SERIALIZATION_FAILURE = "40001";
const ATTEMPTS = 3;

// Our own statements take their locks in a fixed order (signatures, then addresses), so two
// batches should never deadlock; should Postgres still abort one side, trying again is safe
// because the statement was rolled back whole.
async function retryOnDeadlock<T>(work: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      if (attempt >= ATTEMPTS || (code !== DEADLOCK && code !== SERIALIZATION_FAILURE)) throw error;
    }
  }
}
