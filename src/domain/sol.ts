// SOL and wrapped SOL are one token to the alerts: wrapped SOL is SOL in the same units, moved
// through a token account. A transaction is in SOL when its symbol says so (any letter case, as
// native ingest may spell it), or when its mint, or a token standing in for a missing symbol, is
// the wrapped-SOL mint.
import type { Transaction } from "./types.ts";

export const WRAPPED_SOL_MINT = "So11111111111111111111111111111111111111112";

/** Whether a token filter or a transaction's token names SOL: the symbol, or the wrapped-SOL mint. */
export const namesSol = (token: string): boolean => token.toUpperCase() === "SOL" || token === WRAPPED_SOL_MINT;

export const isSol = (tx: Pick<Transaction, "token" | "mint">): boolean => namesSol(tx.token) || tx.mint === WRAPPED_SOL_MINT;
