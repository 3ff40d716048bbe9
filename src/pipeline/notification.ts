// The notification a fired, unsuppressed event owes its alert's channel.
import type { ActiveAlertRow } from "../db/queries/pipeline.ts";
import { counterpartyOf, counterpartyRiskValue, type Firing, type FiringFacts } from "../domain/conditions/index.ts";
import type { NotificationPayload, PayloadCounterparty, RiskFactor, Transaction } from "../domain/types.ts";

export type WalletRisk = { score: number; factors: readonly RiskFactor[] };

/** The webhook URL, or the email address / phone number; null when the alert has none. */
export function destinationOf(alert: ActiveAlertRow): string | null {
  return alert.channel === "webhook" ? alert.webhookUrl : alert.recipient;
}

/**
 * The transaction as GET /v1/transactions shows it (no leg or batch): `mint` always there,
 * null when the feed gave none, as in the API (a client generated from the API's schema
 * reads the payload's transaction too; left out, it broke a strict one).
 */
function publicTransaction(tx: Transaction): Transaction {
  const { signature, type, amount, token, mint, from, to, blockTime, slot, fee, status } = tx;
  return { signature, type, amount, token, mint: mint ?? null, from, to, blockTime, slot, fee, status };
}

/** What every notification of an alert says of the alert, its wallet and the wallet's risk. */
export function alertData(alert: ActiveAlertRow, risk: WalletRisk) {
  return {
    alertId: alert.alertId,
    walletId: alert.walletId,
    address: alert.address,
    alias: alert.alias,
    condition: alert.condition,
    threshold: alert.threshold,
    riskScore: risk.score,
    riskFactors: [...risk.factors],
  };
}

/** A firing's notification and event: the webhook-id header alone named the notification, and nothing the event, which many SOAR and SIEM intakes, keeping only the body, lost. */
export type FiringIds = { notificationId: string; eventId: string };

export function triggeredPayload(
  alert: ActiveAlertRow,
  firing: Firing,
  risk: WalletRisk,
  transaction: Transaction | undefined,
  now: Date,
  ids: FiringIds,
): NotificationPayload {
  return {
    type: "risk_alert.triggered",
    timestamp: now.toISOString(),
    data: {
      notificationId: ids.notificationId,
      eventId: ids.eventId,
      ...alertData(alert, risk),
      observed: firing.observed,
      ...(transaction ? { transaction: publicTransaction(transaction) } : {}),
      ...factsOf(alert.address, transaction, firing.facts),
      reason: firing.reason,
    },
  };
}

type PayloadFacts = Pick<NotificationPayload["data"], "direction" | "counterparty" | "activity" | "previousScore" | "window">;

/**
 * What the reason says, as fields (README, Notifications), each only where it applies: a
 * receiver branches on `counterparty.labels[].category` instead of parsing an English sentence.
 */
function factsOf(address: string, transaction: Transaction | undefined, facts: FiringFacts | undefined): PayloadFacts {
  const other = transaction ? counterpartyOf(address, transaction) : null;
  const known = facts?.counterparty;
  return {
    ...(transaction && other !== null ? { direction: transaction.from === address ? "sent" : "received" } : {}),
    // Only as the evaluation saw it (never a guess of "no labels" for a side nobody looked up).
    ...(known !== undefined && known.address === other ? { counterparty: payloadCounterparty(known) } : {}),
    ...(facts?.activity ? { activity: { count: facts.activity.count, baselinePerHour: facts.activity.baselinePerHour } } : {}),
    ...(facts?.previousScore !== undefined ? { previousScore: facts.previousScore } : {}),
    ...(facts?.window ? { window: { seconds: facts.window.seconds, transfers: facts.window.transfers } } : {}),
  };
}

function payloadCounterparty(counterparty: NonNullable<FiringFacts["counterparty"]>): PayloadCounterparty {
  return {
    address: counterparty.address,
    risk: counterpartyRiskValue(counterparty),
    labels: (counterparty.labels ?? []).map(({ category, score, source }) => ({ category, score, source })),
  };
}
