// unusual_activity: the wallet's transactions in the trailing 60 minutes (this one included)
// reach `threshold` × its baseline, the mean per hour over the 7 days (168 hours) before that
// hour, floored at 1 per hour so that a quiet or new wallet is not alarmed by a handful.
//
// Decisions:
// - Every transaction counts, failed ones and self-transfers included: a burst of failing
//   transactions is unusual activity too.
// - Edge-triggered: it fires on the transaction that takes the count from below the limit to at
//   or above it (countBefore < limit ≤ countAfter), so a burst fires once, not once per
//   transaction; it can fire again after the hour's count has fallen back below the limit.
// - The limit moves at each hour boundary (the baseline is the 7 days before the hour), so "below
//   the limit before it" is judged twice: the count before this transaction against this hour's
//   limit, and the verdict at the transaction before it, against the limit of that one's own hour
//   (window.previous). Either below, and this one at or over, is a crossing. Against this hour's
//   limit alone, a burst under way when a busy hour left the baseline was over the lower limit
//   "before" its next transaction: no crossing was ever seen, and the burst was never reported.
// - The same edge is judged at the wallet's newest minute for a batch as a whole (before and
//   after it), so that transactions delivered out of order cannot carry a burst over the limit
//   unseen; the pipeline does that second judgment (src/pipeline/transaction-firings.ts).
// - A late transaction (not newer than the wallet's newest minute before its batch, and inside
//   the trailing hour there) that crosses the limit at its own minute fires only if that hour
//   was still below the limit: otherwise the burst it joins has fired already, and the hour
//   never fell below the limit since. One later than that hour is judged at its own minute alone.
// - An alert created, resumed or given a new threshold is armed until its first judgment: that
//   judgment fires when the hour is at or over the limit, crossed or not
//   (evaluateArmedUnusualActivity), once for the burst in progress, which this alert never
//   reported; after it, only crossings fire. Edge-triggered alone, an alert lowered from 10 to 5
//   in an hour of 8 transactions, or created during that hour, stayed silent through the burst.
//   A burst this alert did report (an event of it on a transaction dated within an hour of the
//   minute judged) does not fire again: record-events.ts checks that under the alert's lock.
// - `observed` is the multiple of the baseline reached (countAfter / baseline), in the
//   threshold's unit, cut down to the threshold's decimals (at least 2): never below the
//   threshold it crossed, never above the multiple reached (observedMultiple).
import type { Transaction } from "../types.ts";
import { unusualActivityReason } from "../reason.ts";
import type { ActivityWindow, AlertRule, Firing } from "./types.ts";

/** Hours in the baseline period. */
export const BASELINE_HOURS = 168;

/** The wallet's usual transactions per hour: max(1, previous7DaysCount / 168). */
export function baselinePerHour(previous7DaysCount: number): number {
  return Math.max(1, previous7DaysCount / BASELINE_HOURS);
}

/**
 * Thresholds are stored with 9 decimals (numeric(38, 9)), so in billionths they are whole
 * numbers. unusual_activity allows at most 1,000,000 (alert-settings.ts): 1e15 billionths, below
 * 2^53, so `Math.round(multiple * 1e9)` recovers the stored value exactly.
 */
const BILLIONTHS_PER_UNIT = 1_000_000_000;

/**
 * Whether `count` transactions in an hour reach `multiple` × the baseline. Compared as
 * count × 168 × 1e9 ≥ multipleInBillionths × max(168, previous7DaysCount), all whole numbers,
 * so the equality edge is exact for any stored threshold: in floating point 1.1 × 1,680 is
 * 1,848.0000000000002, and 11 transactions on a baseline of 10/hour missed a limit of exactly 11.
 * BigInt because the products pass 2^53 (up to 1e15 billionths × the 7-day count).
 */
export function reachesMultiple(count: number, multiple: number, previous7DaysCount: number): boolean {
  // BigInt() refuses NaN and ±Infinity: answer as the plain comparison would (only -∞ is reached).
  if (!Number.isFinite(multiple)) return multiple < 0;
  const multipleInBillionths = BigInt(billionthsOf(multiple));
  const reached = BigInt(count) * BigInt(BASELINE_HOURS) * BigInt(BILLIONTHS_PER_UNIT);
  const limit = multipleInBillionths * BigInt(Math.max(BASELINE_HOURS, previous7DaysCount));
  return reached >= limit;
}

const billionthsOf = (multiple: number): number => Math.round(multiple * BILLIONTHS_PER_UNIT);

/** Decimal places of a stored threshold (0 to 9), read from its billionths: 5.004 → 3, 5 → 0. */
function thresholdDecimals(threshold: number): number {
  let billionths = billionthsOf(threshold);
  let decimals = 9;
  while (decimals > 0 && billionths % 10 === 0) {
    billionths /= 10;
    decimals -= 1;
  }
  return decimals;
}

/** `observed` keeps at least this many decimals, as it always had (2.66×, not 3×). */
const OBSERVED_MIN_DECIMALS = 2;

/**
 * The multiple of the baseline that `count` reached, for `observed`: count / baseline cut down
 * (never rounded up) to max(2, the threshold's decimals) decimals. Rounded to 2 decimals, 100
 * transactions on a baseline of 19.98/hour (5.0045×) read 5 against the threshold of 5.004
 * they crossed; rounded up, a multiple would read higher than reached. A multiple at or above a
 * threshold of d decimals, cut to d or more decimals, stays at or above it. In whole numbers,
 * as reachesMultiple compares (count × 168 × 10^decimals ÷ max(168, 7-day count), floored), so
 * no float error moves the last digit; the double returned is the one nearest that decimal, as
 * the threshold's is, so `observed >= threshold` holds in the payload too.
 */
export function observedMultiple(count: number, threshold: number, previous7DaysCount: number): number {
  const decimals = Math.max(OBSERVED_MIN_DECIMALS, thresholdDecimals(threshold));
  const scale = 10n ** BigInt(decimals);
  const units = (BigInt(count) * BigInt(BASELINE_HOURS) * scale) / BigInt(Math.max(BASELINE_HOURS, previous7DaysCount));
  return Number(units) / Number(scale);
}

export function evaluateUnusualActivity(rule: AlertRule, tx: Transaction, window: ActivityWindow): Firing | null {
  if (rule.condition !== "unusual_activity") return null;
  if (tx.from !== rule.address && tx.to !== rule.address) return null;
  const { countBefore, countAfter, previous7DaysCount, previous } = window;
  // A limit of zero or less would be "reached" before any transaction, so it never crosses.
  if (!(rule.threshold > 0)) return null;
  if (!reachesMultiple(countAfter, rule.threshold, previous7DaysCount)) return null;
  const belowBefore =
    !reachesMultiple(countBefore, rule.threshold, previous7DaysCount) ||
    (previous !== undefined && !reachesMultiple(previous.count, rule.threshold, previous.previous7DaysCount));
  if (!belowBefore) return null;
  // A late transaction crossing at its own minute, while the wallet's newest trailing hour is
  // over the limit already: the burst has fired (a burst under way when the alert was made or
  // re-armed is its armed judgment's: evaluateArmedUnusualActivity), and the count at the newest
  // minute never fell below the limit. Judged only at its own minute, it fired a second time for
  // the same burst.
  const newest = window.newestBefore;
  if (newest && reachesMultiple(newest.count, rule.threshold, newest.previous7DaysCount)) return null;
  return activityFiring(rule, tx, window);
}

/**
 * The first judgment of an armed alert (created, resumed or given a new threshold, and not
 * judged since): fires when the trailing hour reaches the limit, whatever it held before this
 * transaction and whatever the newest minute's hour held, since no burst of that hour was
 * reported to this alert. The pipeline asks it where evaluateUnusualActivity fired nothing, in
 * the first batch that judges the alert only (src/pipeline/transaction-firings.ts).
 */
export function evaluateArmedUnusualActivity(rule: AlertRule, tx: Transaction, window: ActivityWindow): Firing | null {
  if (rule.condition !== "unusual_activity") return null;
  if (tx.from !== rule.address && tx.to !== rule.address) return null;
  if (!(rule.threshold > 0)) return null;
  if (!reachesMultiple(window.countAfter, rule.threshold, window.previous7DaysCount)) return null;
  return activityFiring(rule, tx, window);
}

function activityFiring(rule: AlertRule, tx: Transaction, window: ActivityWindow): Firing {
  const { countAfter, previous7DaysCount } = window;
  const multiple = observedMultiple(countAfter, rule.threshold, previous7DaysCount);
  const baseline = baselinePerHour(previous7DaysCount);
  return {
    alertId: rule.alertId,
    dedupeKey: tx.signature,
    observed: multiple,
    // The sentence shows that same multiple (rounded as the threshold beside it: reason.ts).
    // The hour judged ends at this transaction's minute, or at the wallet's newest minute for
    // the judgment of a batch as a whole (window.hourTo: that hour holds the burst, the batch's
    // newest transaction, which the event is on, may be a late one hours before it); a
    // baseline at the floor is said to be one ("the usual 1 per hour" of a wallet with no
    // history read as a measured rate).
    reason: unusualActivityReason(
      {
        count: countAfter,
        usualPerHour: previous7DaysCount / BASELINE_HOURS,
        baseline,
        hourTo: window.hourTo ?? tx.blockTime,
        evaluatedAt: window.evaluatedAt,
      },
      multiple,
      rule.threshold,
    ),
    transactionSignature: tx.signature,
    facts: { activity: { count: countAfter, baselinePerHour: baseline } },
  };
}
