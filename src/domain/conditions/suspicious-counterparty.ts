// suspicious_counterparty: the other side of a transaction of the wallet has risk ≥ threshold,
// where its risk is the higher of its label score and its own risk score (when the service
// has scored the address).
//
// Decisions:
// - A failed transaction fires too: an attempt to deal with a sanctioned or scam address is
//   itself what the alert's owner wants to hear about (the sentence says "Tried to send").
// - A self-transfer has no counterparty and never fires.
// - An address with neither a label nor a score has no known risk and never fires, even at
//   threshold 0.
import type { Transaction } from "../types.ts";
import { suspiciousCounterpartyReason } from "../reason.ts";
import { tokenShown } from "../tokens.ts";
import { movementOf } from "./large-transfer.ts";
import type { AlertRule, CounterpartyRisk, Firing } from "./types.ts";

/** The other side of the transaction for `address`; null for a self-transfer or when `address` is on neither side. */
export function counterpartyOf(address: string, tx: Transaction): string | null {
  if (tx.from === address && tx.to !== address) return tx.to;
  if (tx.to === address && tx.from !== address) return tx.from;
  return null;
}

/** max(label score, own risk score), ignoring the unknown ones; null when neither is known. */
export function counterpartyRiskValue(counterparty: CounterpartyRisk): number | null {
  const known = [counterparty.labelScore, counterparty.riskScore].filter((v): v is number => v !== null);
  return known.length === 0 ? null : Math.max(...known);
}

export function evaluateSuspiciousCounterparty(
  rule: AlertRule,
  tx: Transaction,
  counterparty: CounterpartyRisk | null,
): Firing | null {
  if (rule.condition !== "suspicious_counterparty" || counterparty === null) return null;
  // The risk handed in must be about this transaction's other side, not some other address.
  if (counterpartyOf(rule.address, tx) !== counterparty.address) return null;
  const movement = movementOf(rule.address, tx);
  const risk = counterpartyRiskValue(counterparty);
  if (movement === null || risk === null || !(risk >= rule.threshold)) return null;
  // Name the label only when the label is what crossed the threshold.
  const category = counterparty.labelScore === risk ? counterparty.labelCategory : null;
  return {
    alertId: rule.alertId,
    dedupeKey: tx.signature,
    observed: risk,
    reason: suspiciousCounterpartyReason({ ...movement, token: tokenShown(tx) }, risk, category, rule.threshold),
    transactionSignature: tx.signature,
    facts: { counterparty },
  };
}
