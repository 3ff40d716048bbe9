// Evaluates every transaction of a batch against the rules of each tracked address on it:
// a transaction between two tracked wallets is evaluated for both, and an address tracked
// by several callers fires every caller's alerts. Pure: everything is looked up beforehand.
//
// unusual_activity is judged twice per batch (a step of its group) and address:
// - per transaction, on the trailing hour at its own minute, up to and including it;
// - once more at the address's newest minute: the trailing hour there before the step and
//   after it, against the newest hour's baseline. A transaction that arrives after a newer one
//   is judged at its own minute, where the newer one is not counted, and the newer one was
//   judged before it came: two deliveries out of order could carry a burst over the limit with
//   neither transaction crossing it, and nothing fired for the whole burst. The second judgment
//   fires only for an alert the first did not fire in the step, on the address's newest
//   transaction of the step (its signature the dedupe key, so a replay fires nothing new).
//   In time order it adds nothing.
// Both judge "below the limit before" as evaluateUnusualActivity does: the count before against
// this hour's limit, or the verdict before (window.previous) against the limit of its own hour,
// since the limit moves at each hour boundary. The verdict before a transaction's is the one at
// the wallet's transaction before it in time: the batch's previous one, or the wallet's newest
// before the batch (its trailing hour then, transactionsLastHourBefore, with its own hour's
// baseline, previous7DaysBefore), whichever is later. A late transaction (older than that newest
// minute) has none known: earlier batches' transactions may lie between it and the batch's
// previous one, and the verdicts at those are not kept; it is judged at its own minute alone.
// The judgment at the newest minute names that minute as the end of the hour (window.hourTo),
// not its firing transaction's time, which may be a late one's, hours before the burst.
// An armed unusual_activity alert (created, resumed or given a new threshold, not judged since)
// is judged as above, and, where that fires nothing in the first step that judges it, fires on
// the first of those judgments that finds the hour at or over its limit: the burst in progress,
// once (evaluateArmedUnusualActivity). That step spends the arming, for the group's later steps
// too (armedJudged), so that a group fires what its batches would fire one at a time.
import type { ActiveAlertRow } from "../db/queries/pipeline.ts";
import {
  counterpartyOf,
  evaluateArmedUnusualActivity,
  evaluateTransaction,
  evaluateUnusualActivity,
  ignoresOwnWallets,
  legTotals,
  legTotalsWithoutOwn,
  type ActivityWindow,
  type AlertRule,
  type OwnWallets,
  type LegTotal,
  type CounterpartyRisk,
  type Firing,
} from "../domain/conditions/index.ts";
import type { Transaction } from "../domain/types.ts";
import type { AddressActivity } from "./activity.ts";
import type { AddressSides } from "./batch-facts.ts";
import type { TrailingSendsLookup } from "./send-windows.ts";
import type { WalletRisk } from "./notification.ts";

export type TxFiring = {
  firing: Firing;
  alert: ActiveAlertRow;
  transaction: Transaction;
  /** The wallet's score once the firing's batch is scored (for the notification), when known. */
  risk?: WalletRisk;
  /**
   * Fired by an armed unusual_activity alert's first judgment, not by a crossing: recorded only
   * if the alert is still armed under its lock (another evaluation may have judged it meanwhile)
   * and has not reported this burst already (no event of it on a transaction dated within an
   * hour of `hourTo`, the end of the trailing hour judged, Unix seconds: record-events.ts).
   */
  armed?: { hourTo: number };
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
  /**
   * The armed unusual_activity alerts judged in the group's earlier steps, and those judged in
   * this one added: their arming is spent. Absent: every armed alert is judged as armed.
   */
  armedJudged?: Set<string>;
  /** When the group is judged (Unix seconds), for the activity reasons: a burst judged well after it is named by its time. */
  evaluatedAt?: number;
  /** The windowed large_transfer alerts' trailing sums (send-windows.ts); absent: none judged by a window. */
  trailingSends?: TrailingSendsLookup;
  /** The tracked wallets of the owners of alerts with ignoreOwnWallets (own-wallets.ts); absent: none such alert in the group. */
  ownWallets?: OwnWallets;
};

/**
 * The firings of the batch, in chain order (then alert id). Several legs of one transaction
 * may fire one alert: they share its dedupe key, and only the strongest is recorded (record-events).
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
    // Judged by every transaction's other side; large_transfer looks it up only when it fires.
    const needsCounterparty = alerts.some((alert) => alert.condition === "suspicious_counterparty");
    const totals = alerts.some((alert) => alert.condition === "large_transfer") ? legTotalsOf(txs, sides, (legs) => legTotals(address, legs)) : null;
    // Per owner whose alerts here leave out its own wallets: the totals without those legs.
    const ownWallets = lookups.ownWallets !== undefined && alerts.some(ignoresOwnWallets) ? lookups.ownWallets : undefined;
    const ownTotalsOf = ownWallets ? ownLegTotalsOf(txs, sides, ownWallets) : undefined;
    const activity = lookups.activity.get(address);
    const { txIndexes, eventIndexes } = sides;
    const fired = new Set<string>();
    const armed = armedJudgments(alerts, lookups.armedJudged);
    const eventMinutes = activity?.countAfter ? minutesOfEvents(txs, sides) : [];
    for (let k = 0; k < txIndexes.length; k++) {
      const txIndex = txIndexes[k]!;
      const tx = txs[txIndex]!;
      const other = needsCounterparty ? counterpartyOf(address, tx) : null;
      // A transaction's legs share its one activity event (see sidesByAddress).
      const event = eventIndexes[k]!;
      const countAfter = activity?.countAfter?.[event];
      // Each transaction against the baseline before its own hour (not the batch's newest).
      const previous7DaysCount = activity?.previous7DaysAt?.[event] ?? activity?.previous7DaysCount ?? 0;
      const window: ActivityWindow | null =
        activity && countAfter !== undefined
          ? {
              countBefore: countAfter - 1,
              countAfter,
              previous7DaysCount,
              ...newestBeforeIfLate(activity, tx),
              ...verdictBefore(activity, event, eventMinutes),
              evaluatedAt: lookups.evaluatedAt,
            }
          : null;
      const context = {
        counterparty: other === null ? null : lookups.counterparty(other),
        lookupCounterparty: lookups.counterparty,
        activity: window,
        legTotal: totals?.[k] ?? null,
        trailingSends: lookups.trailingSends,
        // Undefined (no closure made) for the usual wallet, whose alerts all judge every leg.
        ownWallets,
        ownLegTotal: ownTotalsOf && ((rule: AlertRule) => ownTotalsOf(rule)[k] ?? null),
      };
      for (const firing of evaluateTransaction(alerts, tx, context)) {
        const alert = alerts.find((candidate) => candidate.alertId === firing.alertId)!;
        found.push({ firing, alert, transaction: tx, order: txIndex });
        fired.add(alert.alertId);
      }
      if (window !== null && armed !== null) judgeArmed(armed, tx, txIndex, window);
    }
    // The first row (leg) of the address's newest transaction: legs share the event (and one
    // activity count), so any of them stands for it.
    const newestTxIndex = txIndexes.length > 0 ? txIndexes[eventIndexes.indexOf(eventIndexes[eventIndexes.length - 1]!)]! : null;
    const newest = activity && newestTxIndex !== null ? newestMinuteWindow(activity, txs[newestTxIndex]!, lookups.evaluatedAt) : null;
    if (newest !== null && newestTxIndex !== null) {
      const txIndex = newestTxIndex;
      for (const alert of alerts) {
        if (alert.condition !== "unusual_activity" || fired.has(alert.alertId)) continue;
        const firing = evaluateUnusualActivity(alert, txs[txIndex]!, newest);
        if (firing) {
          found.push({ firing, alert, transaction: txs[txIndex]!, order: txIndex });
          fired.add(alert.alertId);
        }
      }
      if (armed !== null) judgeArmed(armed, txs[txIndex]!, txIndex, newest);
    }
    if (armed === null || !armed.judged) continue;
    for (const alert of armed.alerts) {
      lookups.armedJudged?.add(alert.alertId);
      // A crossing fired already: that is the burst's event.
      const armedFiring = armed.firings.get(alert.alertId);
      if (armedFiring && !fired.has(alert.alertId)) found.push(armedFiring);
    }
  }
  found.sort((a, b) => a.order - b.order || (a.alert.alertId < b.alert.alertId ? -1 : 1));
  return found.map(({ order: _order, ...rest }) => withCounterparty(rest, lookups.counterparty));
}

/**
 * The firing with its transaction's other side as this evaluation sees it (before the batch is
 * scored), for the notification: a receiver reads its risk and labels without parsing the reason.
 * A suspicious_counterparty or large_transfer firing has its own already; a self-transfer has no other side.
 */
function withCounterparty(found: TxFiring, lookup: FiringLookups["counterparty"]): TxFiring {
  const { firing, alert, transaction } = found;
  if (firing.facts?.counterparty !== undefined) return found;
  const other = counterpartyOf(alert.address, transaction);
  if (other === null) return found;
  return { ...found, firing: { ...firing, facts: { ...firing.facts, counterparty: lookup(other) } } };
}

/** An address's armed alerts in a step: whether any judgment was made, and each one's first firing. */
type ArmedJudgments = { alerts: ActiveAlertRow[]; judged: boolean; firings: Map<string, TxFiring & { order: number }> };

/** The address's armed unusual_activity alerts whose arming no earlier step of the group spent; null when none (the usual case). */
function armedJudgments(alerts: readonly ActiveAlertRow[], spent: ReadonlySet<string> | undefined): ArmedJudgments | null {
  let armed: ActiveAlertRow[] | undefined;
  for (const alert of alerts) {
    if (alert.activityArmed === true && alert.condition === "unusual_activity" && !spent?.has(alert.alertId)) (armed ??= []).push(alert);
  }
  return armed ? { alerts: armed, judged: false, firings: new Map() } : null;
}

/** One judgment of the step (a transaction's own minute, or the newest minute): keeps each armed alert's first firing. */
function judgeArmed(armed: ArmedJudgments, tx: Transaction, txIndex: number, window: ActivityWindow): void {
  armed.judged = true;
  for (const alert of armed.alerts) {
    if (armed.firings.has(alert.alertId)) continue;
    const firing = evaluateArmedUnusualActivity(alert, tx, window);
    if (firing) armed.firings.set(alert.alertId, { firing, alert, transaction: tx, order: txIndex, armed: { hourTo: window.hourTo ?? tx.blockTime } });
  }
}

/**
 * Per row of the address (sides.txIndexes), the total of its token and direction over the
 * address's legs of that transaction; null for a transaction it is on with one leg only (the
 * usual case: nothing to add up). A transaction's legs share one event (sidesByAddress).
 */
function legTotalsOf(
  txs: readonly Transaction[],
  sides: AddressSides,
  totalsOf: (legs: readonly Transaction[]) => Array<LegTotal | null>,
): Array<LegTotal | null> {
  const { txIndexes, eventIndexes } = sides;
  const totals: Array<LegTotal | null> = new Array<LegTotal | null>(txIndexes.length).fill(null);
  for (let start = 0; start < txIndexes.length; ) {
    let end = start + 1;
    while (end < txIndexes.length && eventIndexes[end] === eventIndexes[start]) end++;
    if (end - start > 1) {
      const legs = txIndexes.slice(start, end).map((index) => txs[index]!);
      totalsOf(legs).forEach((total, j) => (totals[start + j] = total));
    }
    start = end;
  }
  return totals;
}

/** legTotalsOf without the legs to and from each rule owner's wallets (own-wallets.ts), built once per owner when first asked. */
function ownLegTotalsOf(txs: readonly Transaction[], sides: AddressSides, ownWallets: OwnWallets): (rule: AlertRule) => Array<LegTotal | null> {
  const byOwner = new Map<string, Array<LegTotal | null>>();
  return (rule) => {
    const key = rule.owner ?? "";
    let found = byOwner.get(key);
    if (!found) {
      found = legTotalsOf(txs, sides, (legs) => legTotalsWithoutOwn(rule, legs, ownWallets));
      byOwner.set(key, found);
    }
    return found;
  };
}

/**
 * For a transaction not newer than the address's newest minute before the step (a late one) and
 * inside the trailing hour there: that hour before the step, with the baseline of that minute's
 * own hour, the limit it was judged by (the newest hour's when an older answer lacks it).
 */
function newestBeforeIfLate(activity: AddressActivity, tx: Transaction): Pick<ActivityWindow, "newestBefore"> {
  const { newestMinuteBefore, transactionsLastHourBefore } = activity;
  if (newestMinuteBefore === null || transactionsLastHourBefore === null) return {};
  const minute = Math.floor(tx.blockTime / 60);
  // Late, and inside that newest trailing hour: it joins the burst counted there. One later
  // than that completes a burst of its own, judged at its own minute alone.
  if (minute > newestMinuteBefore || minute < newestMinuteBefore - 59) return {};
  return { newestBefore: { count: transactionsLastHourBefore, previous7DaysCount: activity.previous7DaysBefore ?? activity.previous7DaysCount } };
}

/** Per event of the address in the step (events in chain order): the minute of its transaction. */
function minutesOfEvents(txs: readonly Transaction[], { txIndexes, eventIndexes }: AddressSides): number[] {
  const minutes: number[] = [];
  eventIndexes.forEach((event, row) => (minutes[event] ??= Math.floor(txs[txIndexes[row]!]!.blockTime / 60)));
  return minutes;
}

/**
 * The verdict before event `event`'s (see the top of this file): at the step's previous event,
 * or at the newest minute before the step, whichever is later; none for a late event, nor when
 * the counts are not known (an answer stored by an older version lacks the newest minute's
 * baseline: the event is then judged against its own hour's limit alone, as before).
 */
function verdictBefore(activity: AddressActivity, event: number, eventMinutes: readonly number[]): Pick<ActivityWindow, "previous"> {
  const { newestMinuteBefore, transactionsLastHourBefore, previous7DaysBefore, countAfter, previous7DaysAt } = activity;
  if (newestMinuteBefore !== null && eventMinutes[event]! < newestMinuteBefore) return {};
  if (event > 0 && (newestMinuteBefore === null || eventMinutes[event - 1]! >= newestMinuteBefore)) {
    const count = countAfter?.[event - 1];
    const previous7DaysCount = previous7DaysAt?.[event - 1];
    return count === undefined || previous7DaysCount === undefined ? {} : { previous: { count, previous7DaysCount } };
  }
  if (newestMinuteBefore === null || transactionsLastHourBefore === null || previous7DaysBefore === null) return {};
  return { previous: { count: transactionsLastHourBefore, previous7DaysCount: previous7DaysBefore } };
}

/**
 * The trailing hour at the address's newest minute, before the step and after it; null when not
 * counted. The verdict before is that same count before the step against the baseline of its own
 * hour (the newest minute before may lie in an hour whose limit was higher). The hour judged ends
 * at the wallet's newest minute: the step's newest transaction (`newestTx`), unless the wallet's
 * newest minute before the step is later (the step held only late transactions).
 */
function newestMinuteWindow(activity: AddressActivity, newestTx: Transaction, evaluatedAt: number | undefined): ActivityWindow | null {
  const { transactionsLastHourBefore, previous7DaysBefore, newestMinuteBefore } = activity;
  if (transactionsLastHourBefore === null) return null;
  return {
    countBefore: transactionsLastHourBefore,
    countAfter: activity.transactionsLastHour,
    previous7DaysCount: activity.previous7DaysCount,
    ...(previous7DaysBefore === null ? {} : { previous: { count: transactionsLastHourBefore, previous7DaysCount: previous7DaysBefore } }),
    ...(newestMinuteBefore !== null && newestMinuteBefore * 60 > newestTx.blockTime ? { hourTo: newestMinuteBefore * 60 } : {}),
    evaluatedAt,
  };
}
