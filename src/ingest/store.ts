// Storing what the chain sources report. Postgres first, then the queue (the outbox order):
// a batch whose job cannot be enqueued stays stored, unevaluated, and the reconciler
// enqueues it later; a repeated batch stores nothing and enqueues nothing.
import type { Deps } from "../deps.ts";
import type { Transaction } from "../domain/types.ts";
import { replaceAccountSnapshots } from "../db/queries/accounts.ts";
import { insertTransactionBatch } from "../db/queries/transactions.ts";
import { newId } from "../ids.ts";
import { QUEUES, type EvaluateBatchJob } from "../queue/names.ts";
import type { AccountSnapshot } from "./native.ts";

export type StoredBatch = { accepted: number; duplicates: number; batchId: string | null };

/**
 * Stores the transactions not stored yet as one new batch and enqueues its evaluation.
 * `duplicates` counts every item that added no row: already stored, or a repeat of a
 * signature earlier in `txs` (the first one given wins), so accepted + duplicates = txs.length.
 * Throws when Postgres fails (nothing stored) or when the enqueue fails (rows stored).
 */
export async function storeTransactionBatch(
  deps: Pick<Deps, "sql" | "queues">,
  txs: Transaction[],
): Promise<{ accepted: number; duplicates: number; batchId: string | null }> {
  const unique = uniqueBySignature(txs);
  if (unique.length === 0) return { accepted: 0, duplicates: txs.length, batchId: null };
  const batchId = newId("bat");
  const accepted = await retryOnDeadlock(() => insertTransactionBatch(deps.sql, batchId, unique));
  if (accepted === 0) return { accepted: 0, duplicates: txs.length, batchId: null };
  const job: EvaluateBatchJob = { batchId };
  await deps.queues[QUEUES.transactions].add("evaluate", job, { jobId: batchId });
  return { accepted, duplicates: txs.length - accepted, batchId };
}

/** Replaces the snapshots of the given addresses (each given once) in one transaction. */
export async function storeAccountSnapshots(deps: Pick<Deps, "sql">, accounts: readonly AccountSnapshot[]): Promise<number> {
  const ordered = [...accounts].sort((a, b) => compareText(a.address, b.address));
  await retryOnDeadlock(() => replaceAccountSnapshots(deps.sql, ordered));
  return accounts.length;
}

/** One per signature, first wins, in signature order so concurrent batches lock rows alike. */
function uniqueBySignature(txs: readonly Transaction[]): Transaction[] {
  const bySignature = new Map<string, Transaction>();
  for (const tx of txs) if (!bySignature.has(tx.signature)) bySignature.set(tx.signature, tx);
  return [...bySignature.values()].sort((a, b) => compareText(a.signature, b.signature));
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
