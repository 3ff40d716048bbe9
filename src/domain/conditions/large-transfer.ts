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
// - A transaction is judged by what the wallet moved in it, not leg by leg: its legs of one
//   token in one direction (two token transfers of 6,000 USDC to the wallet) count as their
//   exact total (12,000 USDC). Split into legs, a payment would otherwise pass under any
//   threshold: a classic way to stay below a reporting limit. Native SOL and wrapped SOL are
//   not added together (a swap from SOL moves the same SOL as both).
import { decimalAtLeast, decimalValue, sumDecimals, type ExactDecimal } from "../decimal.ts";
import { isSol, movesToken, tokenNamed, tokenOf, tokenShown } from "../tokens.ts";
import type { Transaction } from "../types.ts";
import { largeTransferReason, type MovementFacts } from "../reason.ts";
import type { AlertRule, CounterpartyRisk, Firing } from "./types.ts";

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
    // As a person should read it (a symbol is whatever the token's creator chose), named only
    // once the movement goes into a sentence (a firing), not for every transaction judged.
    token: tx.token,
    counterparty: sent ? tx.to : tx.from,
    type: tx.type,
  };
}

/**
 * What the wallet moved in one token and one direction over the legs of one transaction:
 * `exact` is judged against the threshold, `amount` (the double nearest to it) is shown.
 */
export type LegTotal = { amount: number; exact: ExactDecimal; legs: number; otherCounterparties: number };

/**
 * For each leg of one transaction (the wallet's rows of one signature, in leg order), the total
 * of its token and direction over all of them; null for a leg that moves nothing for the
 * wallet (a self-transfer, a leg it is not on), or that `counts` leaves out (own-wallets.ts).
 */
export function legTotals(address: string, legs: readonly Transaction[], counts?: (tx: Transaction) => boolean): Array<LegTotal | null> {
  const keys = legs.map((tx) => {
    const movement = movementOf(address, tx);
    if (movement === null || (counts !== undefined && !counts(tx))) return null;
    // As the legs name their token, not as the filter reads it: native SOL and wrapped SOL stay
    // apart. A swap from SOL wraps it first, and the wrapping and the wrapped transfer are the
    // same SOL: added up, a 5 SOL swap read "Sent 10 SOL … in 2 transfers".
    if (tx.mint != null) return `${movement.direction} mint:${tx.mint}`;
    const token = tokenOf(tx);
    return `${movement.direction} ${isSol(tx) ? "native SOL" : "mint" in token ? `mint:${token.mint}` : `symbol:${token.symbol}`}`;
  });
  // The legs of each key in one pass (a payout can have thousands of legs).
  const groups = new Map<string, Transaction[]>();
  keys.forEach((key, k) => {
    if (key === null) return;
    const members = groups.get(key);
    if (members) members.push(legs[k]!);
    else groups.set(key, [legs[k]!]);
  });
  const totals = new Map<string, LegTotal>();
  for (const [key, members] of groups) {
    const counterparties = new Set(members.map((tx) => (tx.from === address ? tx.to : tx.from)));
    const exact = sumDecimals(members.map((tx) => tx.amount));
    totals.set(key, { amount: decimalValue(exact), exact, legs: members.length, otherCounterparties: counterparties.size - 1 });
  }
  return keys.map((key) => (key === null ? null : totals.get(key)!));
}

/**
 * `total`: the leg's LegTotal when the wallet is on other legs of the transaction too (one leg
 * alone is judged by its own amount). `counterparty`: the other side as the evaluation sees it,
 * when it was looked up already, else `lookupCounterparty` looks it up for a transfer that fires:
 * a label of it is named in the reason (the desk whose only alert is a large_transfer hears that
 * the 2,000 SOL went to a sanctioned address), and it is the firing's.
 */
export function evaluateLargeTransfer(
  rule: AlertRule,
  tx: Transaction,
  total: LegTotal | null = null,
  counterparty: CounterpartyRisk | null = null,
  lookupCounterparty?: (address: string) => CounterpartyRisk | null,
): Firing | null {
  if (rule.condition !== "large_transfer") return null;
  if (tx.status !== "success") return null;
  const movement = movementOf(rule.address, tx);
  if (movement === null) return null;
  if (!matchesToken(rule.token, tx)) return null;
  const amount = total?.amount ?? tx.amount;
  // A total is judged exactly: two legs of 0.999999999999999 and 0.000000000000000999 are
  // 0.999999999999999999, which a double rounds up to 1 (a threshold it never reached).
  if (!(total ? decimalAtLeast(total.exact, rule.threshold) : amount >= rule.threshold)) return null;
  const named = { ...movement, token: tokenShown(tx) };
  const facts = total && total.legs > 1 ? { ...named, amount, legs: { count: total.legs, otherCounterparties: total.otherCounterparties } } : named;
  // Only a lookup of this transaction's other side (never some other address's); looked up
  // here, once the transfer fires, rather than for every transaction the wallet makes.
  const other =
    counterparty !== null && counterparty.address === movement.counterparty
      ? counterparty
      : movement.counterparty !== rule.address && lookupCounterparty
        ? lookupCounterparty(movement.counterparty)
        : null;
  return {
    alertId: rule.alertId,
    dedupeKey: tx.signature,
    observed: amount,
    reason: largeTransferReason(facts, rule.threshold, other?.labelCategory ?? null),
    transactionSignature: tx.signature,
    ...(other ? { facts: { counterparty: other } } : {}),
  };
}
