// The alert conditions (DESIGN.md section 4): one pure function per condition, and one entry
// for the pipeline that evaluates a transaction against every rule of one address.
import type { Transaction } from "../types.ts";
import { evaluateLargeTransfer } from "./large-transfer.ts";
import { evaluateWindowedLargeTransfer } from "./large-transfer-window.ts";
import { ignoresOwnWallets, isOwnLeg } from "./own-wallets.ts";
import { evaluateSuspiciousCounterparty } from "./suspicious-counterparty.ts";
import type { AlertRule, Firing, TransactionContext } from "./types.ts";
import { evaluateUnusualActivity } from "./unusual-activity.ts";

export type {
  ActivityWindow,
  AlertRule,
  CounterpartyLabel,
  CounterpartyRisk,
  Firing,
  FiringFacts,
  ScoreChange,
  TransactionContext,
} from "./types.ts";
export { evaluateLargeTransfer, legTotals, matchesToken, movementOf, type LegTotal } from "./large-transfer.ts";
export {
  evaluateWindowedLargeTransfer,
  sendWindow,
  trailingSends,
  type SendWindow,
  type StoredSend,
  type TrailingSends,
} from "./large-transfer-window.ts";
export { ignoresOwnWallets, isOwnLeg, legTotalsWithoutOwn, ownWalletsOf, type OwnWallets } from "./own-wallets.ts";
export { counterpartyOf, counterpartyRiskValue, evaluateSuspiciousCounterparty } from "./suspicious-counterparty.ts";
export { BASELINE_HOURS, baselinePerHour, evaluateArmedUnusualActivity, evaluateUnusualActivity, reachesMultiple } from "./unusual-activity.ts";
export { evaluateRiskScoreIncrease, judgeScoreChange, type ScoreAlertState, type ScoreJudgment } from "./risk-score-increase.ts";
export { isSuppressedByCooldown } from "./cooldown.ts";
export { oneEventPerTransaction, type LegFiring } from "./one-event-per-transaction.ts";

function evaluateRule(rule: AlertRule, tx: Transaction, context: TransactionContext): Firing | null {
  switch (rule.condition) {
    case "large_transfer": {
      // A leg to or from the owner's own wallet is not judged; the others by their total without such legs.
      const ignoringOwn = context.ownWallets !== undefined && ignoresOwnWallets(rule);
      if (ignoringOwn && isOwnLeg(rule, tx, context.ownWallets)) return null;
      const total = ignoringOwn ? (context.ownLegTotal?.(rule) ?? null) : (context.legTotal ?? null);
      if (rule.windowSeconds != null) {
        const trailing = context.trailingSends?.(rule, tx) ?? null;
        return evaluateWindowedLargeTransfer(rule, tx, trailing, total, context.counterparty, context.lookupCounterparty);
      }
      return evaluateLargeTransfer(rule, tx, total, context.counterparty, context.lookupCounterparty);
    }
    case "suspicious_counterparty":
      return evaluateSuspiciousCounterparty(rule, tx, context.counterparty);
    case "unusual_activity":
      return context.activity === null ? null : evaluateUnusualActivity(rule, tx, context.activity);
    case "risk_score_increase":
      // Fired by score changes (evaluateRiskScoreIncrease), never by a transaction itself.
      return null;
  }
}

/**
 * Every firing of one transaction for the rules of one address, in the rules' order. The
 * context (counterparty risk, activity counts) must be about that address. A transaction
 * between two tracked wallets is evaluated once per address, each with its own context.
 */
export function evaluateTransaction(
  rules: readonly AlertRule[],
  tx: Transaction,
  context: TransactionContext,
): Firing[] {
  const firings: Firing[] = [];
  for (const rule of rules) {
    const firing = evaluateRule(rule, tx, context);
    if (firing !== null) firings.push(firing);
  }
  return firings;
}
