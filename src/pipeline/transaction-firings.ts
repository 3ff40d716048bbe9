// Evaluates every transaction of a batch against the rules of each tracked address on it:
// a transaction between two tracked wallets is evaluated for both, and an address tracked
// by several callers fires every caller's alerts. Pure: everything is looked up beforehand.
import type { ActiveAlertRow } from "../db/queries/pipeline.ts";
import {
  counterpartyOf,
  evaluateTransaction,
  type ActivityWindow,
  type CounterpartyRisk,
  type Firing,
} from "../domain/conditions/index.ts";
import type { Transaction } from "../domain/types.ts";
import type { AddressActivity } from "./activity.ts";
import type { AddressSides } from "./batch-facts.ts";
import type { WalletRisk } from "./notification.ts";

export type TxFiring = {
  firing: Firing;
  alert: ActiveAlertRow;
  transaction: Transaction;
  /** The wallet's score once the firing's batch is scored (for the notification), when known. */
  risk?: WalletRisk;
};

export function groupByAddress(alerts: readonly ActiveAlertRow[]): Map<string, ActiveAlertRow[]> {
  const byAddress = new Map<string, ActiveAlertRow[]>();
  for (const alert of alerts) {
    const list = byAddress.get(alert.address);
    if (list) list.push(alert);
    else byAddress.set(alert.address, [alert]);
  }
  return byAddress;
}

export type FiringLookups = {
  sides: ReadonlyMap<string, AddressSides>;
  activity: ReadonlyMap<string, AddressActivity>;
  counterparty: (address: string) => CounterpartyRisk;
};

/**
 * The firings of the batch, in chain order (then alert id). Several legs of one transaction
 * may fire one alert: they share its dedupe key, and only the first is recorded (record-events).
 */
export function evaluateTransactions(
  txs: readonly Transaction[],
  alertsByAddress: ReadonlyMap<string, readonly ActiveAlertRow[]>,
  lookups: FiringLookups,
): TxFiring[] {
  const found: Array<TxFiring & { order: number }> = [];
  // The batch's tracked addresses, which are fewer than the group's alerted ones.
  for (const [address, sides] of lookups.sides) {
    const alerts = alertsByAddress.get(address);
    if (!alerts) continue;
    const needsCounterparty = alerts.some((alert) => alert.condition === "suspicious_counterparty");
    const activity = lookups.activity.get(address);
    const { txIndexes, eventIndexes } = sides;
    for (let k = 0; k < txIndexes.length; k++) {
      const txIndex = txIndexes[k]!;
      const tx = txs[txIndex]!;
      const other = needsCounterparty ? counterpartyOf(address, tx) : null;
      // A transaction's legs share its one activity event (see sidesByAddress).
      const countAfter = activity?.countAfter?.[eventIndexes[k]!];
      // Each transaction against the baseline before its own hour (not the batch's newest).
      const previous7DaysCount = activity?.previous7DaysAt?.[eventIndexes[k]!] ?? activity?.previous7DaysCount ?? 0;
      const window: ActivityWindow | null =
        activity && countAfter !== undefined ? { countBefore: countAfter - 1, countAfter, previous7DaysCount } : null;
      const context = { counterparty: other === null ? null : lookups.counterparty(other), activity: window };
      for (const firing of evaluateTransaction(alerts, tx, context)) {
        const alert = alerts.find((candidate) => candidate.alertId === firing.alertId)!;
        found.push({ firing, alert, transaction: tx, order: txIndex });
      }
    }
  }
  found.sort((a, b) => a.order - b.order || (a.alert.alertId < b.alert.alertId ? -1 : 1));
  return found.map(({ order: _order, ...rest }) => rest);
}
