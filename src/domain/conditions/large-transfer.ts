// large_transfer: a transaction of the wallet, in either direction and of any type, moves at
// least `threshold` units of its token (and of the alert's token when one is set).
//
// Decisions:
// - A failed transaction does not fire: nothing moved. (It still counts as activity.)
// - A self-transfer (from = to = the wallet) does not fire: the wallet's holdings did not change
//   and nothing reached anyone else.
// - The token filter names a token as domain/tokens.ts tells them apart: a mint exactly (base58
//   is case-sensitive), a well-known symbol in any case as its mint ("usdc", "USDC" and the USDC
//   mint all select USDC, and never another mint that calls itself USDC), any other symbol in
//   any case. SOL and wrapped SOL are one token: a filter of "SOL" or of the wrapped-SOL mint
//   matches both, however the transaction spells it.
import { movesToken, tokenNamed } from "../tokens.ts";
import type { Transaction } from "../types.ts";
import { largeTransferReason, type MovementFacts } from "../reason.ts";
import type { AlertRule, Firing } from "./types.ts";

/** Whether the transaction is in the token the rule asks for (null = any). */
export function matchesToken(filter: string | null, tx: Transaction): boolean {
  return filter === null || movesToken(tokenNamed(filter), tx);
}

/**
 * The wallet's side of a transaction, for the sentences: null when the wallet is on neither side
 * or on both (a self-transfer).
 */
export function movementOf(address: string, tx: Transaction): MovementFacts | null {
  const sent = tx.from === address;
  const received = tx.to === address;
  if (sent === received) return null;
  return {
    direction: sent ? "sent" : "received",
    failed: tx.status === "failed",
    amount: tx.amount,
    token: tx.token,
    counterparty: sent ? tx.to : tx.from,
    type: tx.type,
  };
}

export function evaluateLargeTransfer(rule: AlertRule, tx: Transaction): Firing | null {
  if (rule.condition !== "large_transfer") return null;
  if (tx.status !== "success") return null;
  const movement = movementOf(rule.address, tx);
  if (movement === null) return null;
  if (!matchesToken(rule.token, tx)) return null;
  if (!(tx.amount >= rule.threshold)) return null;
  return {
    alertId: rule.alertId,
    dedupeKey: tx.signature,
    observed: tx.amount,
    reason: largeTransferReason(movement, rule.threshold),
    transactionSignature: tx.signature,
  };
}
