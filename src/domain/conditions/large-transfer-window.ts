// large_transfer with a window (the alert's windowSeconds): what the wallet SENT of the alert's
// token, summed over the trailing window, judged against the threshold. A movement split into
// parts each below a per-transaction threshold (structuring: a hot wallet drained in 70 parts of
// 800 SOL in 15 minutes) passes every per-transaction judgment; its sum does not.
//
// Decisions:
// - The sends summed are those of the per-transaction rule (large-transfer.ts): successful
//   transactions, not self-transfers, of the alert's token as its filter reads it (SOL and
//   wrapped SOL one token). A transaction counts with what that rule would judge it by: its
//   legs of one spelling of the token added up, native SOL and wrapped SOL never added together
//   (a swap from SOL moves the same SOL as both), the larger of the two when it has both.
//   A windowed alert always has a token (the API refuses one without): amounts of different
//   tokens are never added.
// - The trailing window of a transaction sent at block time t holds the sends with block time in
//   (t − windowSeconds, t], in chain order (block time, slot, signature, leg), up to and
//   including it. It fires on the send that makes that sum reach the threshold from below (the
//   sum before it < threshold ≤ the sum including it). While the sum stays at or above the
//   threshold, later sends do not fire again: the drain going on is the same incident. Once it
//   has fallen below (its oldest parts left the window) and reaches the threshold again, it
//   fires again.
// - A single send at or above the threshold fires, as it does without a window (it is a large
//   transfer by itself), even while the trailing sum is above the threshold already.
// - A receipt is judged per transaction, as without a window: the window sums what left the
//   wallet (a drain), and a single received transfer at or above the threshold still fires.
// - The sum reads the stored transactions (every batch's, whichever worker evaluates them), so
//   a transaction that arrives late (block time earlier than sends stored already) is judged by
//   the same rule over what is stored at its evaluation: with parts that arrived before it.
// - A late send is judged a second time, at the wallet's newest send within its reach (block
//   time before its own + windowSeconds) that an earlier evaluation judged: the sum of that
//   send's window before the late send and with it, counting the sends judged already and the
//   evaluation's own sends up to the late one in chain order (as if they had arrived in that
//   order). It fires where that sum reaches the threshold from below. Judged at its own block
//   time alone, a late part never counts in the windows of the parts after it: a drain whose
//   last part was delivered first (a webhook's retries, a backfill) fired nothing at all, the
//   parts judged before it being below the threshold and those after it never judged again.
//   In block-time order nothing is late and this adds nothing.
// - The firing's `observed` is the sum that reached the threshold (the trailing sum including the
//   firing send; for a late send judged at a newer one, that one's window), and its dedupe key
//   the signature, as without a window: a replay fires nothing new.
import { decimalAtLeast, decimalValue, sumDecimals, type ExactDecimal } from "../decimal.ts";
import { formatAmount } from "../reason.ts";
import { tokenShown } from "../tokens.ts";
import type { Transaction } from "../types.ts";
import { evaluateLargeTransfer, legTotals, matchesToken, movementOf, type LegTotal } from "./large-transfer.ts";
import type { AlertRule, CounterpartyRisk, Firing } from "./types.ts";

/** The shortest and longest window an alert may have (windowSeconds): a minute, a day. */
export const WINDOW_SECONDS = { min: 60, max: 86_400 } as const;

/**
 * A stored row of the wallet as the window reads it: `judged` when its batch was evaluated
 * before this evaluation (absent: not known to be).
 */
export type StoredSend = Transaction & { judged?: boolean };

/**
 * One send of the wallet in the token: a transaction, in chain order, and what it counts for;
 * `judged` by an earlier evaluation, or `fresh`: of this evaluation (neither: of a batch another
 * evaluation has still to judge).
 */
type Send = { signature: string; blockTime: number; amount: ExactDecimal; judged: boolean; fresh: boolean };

/**
 * The wallet's sends of one token in chain order, with their running sum: built once per
 * evaluation from the stored sends, then asked for each transaction judged.
 */
export type SendWindow = {
  sends: readonly Send[];
  /** Where each signature is in `sends`. */
  at: ReadonlyMap<string, number>;
  /** `running[k]`: the sum of sends[0..k) in units of 10^-scale; `judged` and `fresh` the same of those sends only, with their counts. */
  running: readonly bigint[];
  judged: { sum: readonly bigint[]; count: readonly number[] };
  fresh: { sum: readonly bigint[]; count: readonly number[] };
  /** Per index, the last judged send at or before it (-1: none). */
  lastJudged: readonly number[];
  scale: number;
};

/** A window's sum before one send and including it, and how many sends that is. */
export type WindowSum = { before: ExactDecimal; including: ExactDecimal; transfers: number };

/**
 * The trailing window of one send, its own amount, and for a late send (`late`) the window of
 * the newest judged send within its reach, judged before it and with it.
 */
export type TrailingSends = WindowSum & { own: ExactDecimal; late?: WindowSum };

/**
 * The sends of `address` in the token a filter names, among `stored` (the wallet's stored rows,
 * any order of batches, in chain order: block time, slot, signature, leg), as a SendWindow.
 * `evaluated`: the signatures of this evaluation (absent: every send is). `counts`: which legs
 * are summed at all (absent: every one; own-wallets.ts leaves out the sends to own wallets).
 */
export function sendWindow(
  address: string,
  token: string,
  stored: readonly StoredSend[],
  evaluated?: ReadonlySet<string>,
  counts?: (tx: Transaction) => boolean,
): SendWindow {
  const sends: Send[] = [];
  for (let start = 0; start < stored.length; ) {
    let end = start + 1;
    while (end < stored.length && stored[end]!.signature === stored[start]!.signature) end++;
    const legs = stored.slice(start, end).filter((tx) => isCountedSend(address, token, tx) && (counts === undefined || counts(tx)));
    if (legs.length > 0) {
      const { signature, blockTime } = legs[0]!;
      const fresh = evaluated === undefined || evaluated.has(signature);
      sends.push({ signature, blockTime, amount: sentAmount(address, legs), judged: !fresh && legs[0]!.judged === true, fresh });
    }
    start = end;
  }
  const scale = Math.max(0, ...sends.map((send) => send.amount.scale));
  const running = runningSums(sends, scale, () => true);
  const lastJudged: number[] = [];
  sends.forEach((send, k) => lastJudged.push(send.judged ? k : k > 0 ? lastJudged[k - 1]! : -1));
  return {
    sends,
    at: new Map(sends.map((send, k) => [send.signature, k])),
    running: running.sum,
    judged: runningSums(sends, scale, (send) => send.judged),
    fresh: runningSums(sends, scale, (send) => send.fresh),
    lastJudged,
    scale,
  };
}

/** The running sums and counts of the sends that `counts` selects: `sum[k]` of sends[0..k). */
function runningSums(sends: readonly Send[], scale: number, counts: (send: Send) => boolean): { sum: bigint[]; count: number[] } {
  const sum: bigint[] = [0n];
  const count: number[] = [0];
  for (const send of sends) {
    const counted = counts(send);
    sum.push(sum[sum.length - 1]! + (counted ? atScale(send.amount, scale) : 0n));
    count.push(count[count.length - 1]! + (counted ? 1 : 0));
  }
  return { sum, count };
}

/** The trailing window ending at the send `signature` (its block time), or null when it is no send of the window's. */
export function trailingSends(window: SendWindow, signature: string, windowSeconds: number): TrailingSends | null {
  const k = window.at.get(signature);
  if (k === undefined) return null;
  const { sends, running, scale } = window;
  const first = firstAfter(sends, sends[k]!.blockTime - windowSeconds);
  const exact = (units: bigint): ExactDecimal => ({ units, scale });
  const late = lateSum(window, k, windowSeconds);
  return {
    before: exact(running[k]! - running[first]!),
    including: exact(running[k + 1]! - running[first]!),
    own: sends[k]!.amount,
    transfers: k + 1 - first,
    ...(late ? { late } : {}),
  };
}

/**
 * For a send of this evaluation with a judged send after it within its reach: the window of the
 * newest such send, before this one and with it, counting the judged sends and this
 * evaluation's up to this one (see the top of this file); undefined for any other send.
 */
function lateSum(window: SendWindow, k: number, windowSeconds: number): WindowSum | undefined {
  const { sends, judged, fresh, lastJudged, scale } = window;
  const send = sends[k]!;
  if (!send.fresh) return undefined;
  const reach = firstAtOrAfter(sends, send.blockTime + windowSeconds) - 1;
  const newest = reach >= 0 ? lastJudged[reach]! : -1;
  if (newest <= k) return undefined;
  const first = firstAfter(sends, sends[newest]!.blockTime - windowSeconds);
  const before = judged.sum[newest + 1]! - judged.sum[first]! + fresh.sum[k]! - fresh.sum[first]!;
  return {
    before: { units: before, scale },
    including: { units: before + atScale(send.amount, scale), scale },
    transfers: judged.count[newest + 1]! - judged.count[first]! + fresh.count[k]! - fresh.count[first]! + 1,
  };
}

/**
 * A windowed large_transfer alert on one transaction (leg) of its wallet: a send by the trailing
 * window (`trailing`, that of the transaction's signature), a receipt as without a window. No
 * trailing window known for a send (it is not stored): judged as without a window.
 */
export function evaluateWindowedLargeTransfer(
  rule: AlertRule,
  tx: Transaction,
  trailing: TrailingSends | null,
  total: LegTotal | null = null,
  counterparty: CounterpartyRisk | null = null,
  lookupCounterparty?: (address: string) => CounterpartyRisk | null,
): Firing | null {
  const perTransaction = () => evaluateLargeTransfer(rule, tx, total, counterparty, lookupCounterparty);
  if (rule.condition !== "large_transfer" || rule.windowSeconds == null || rule.token === null) return perTransaction();
  const movement = movementOf(rule.address, tx);
  if (movement === null || movement.direction !== "sent" || trailing === null) return perTransaction();
  if (!isCountedSend(rule.address, rule.token, tx)) return null;
  const crosses = ({ before, including }: WindowSum) => !decimalAtLeast(before, rule.threshold) && decimalAtLeast(including, rule.threshold);
  const judged = crosses(trailing) || decimalAtLeast(trailing.own, rule.threshold) ? trailing : trailing.late && crosses(trailing.late) ? trailing.late : null;
  if (judged === null) return null;
  const { including, transfers } = judged;
  // One send alone is the per-transaction firing, reason and counterparty and all.
  if (transfers === 1) return perTransaction();
  const observed = decimalValue(including);
  return {
    alertId: rule.alertId,
    dedupeKey: tx.signature,
    observed,
    reason: windowedReason(observed, tokenShown(tx), transfers, rule.windowSeconds, rule.threshold),
    transactionSignature: tx.signature,
    facts: { window: { seconds: rule.windowSeconds, transfers } },
  };
}

/** "Sent 10,500 SOL in 15 transfers within 1 hour (threshold 10,000)." */
export function windowedReason(sum: number, token: string, transfers: number, windowSeconds: number, threshold: number): string {
  return `Sent ${formatAmount(sum)} ${token} in ${formatAmount(transfers)} transfers within ${windowShown(windowSeconds)} (threshold ${formatAmount(threshold)}).`;
}

/** 3600 → "1 hour", 900 → "15 minutes", 5400 → "90 minutes", 90 → "90 seconds", 86400 → "24 hours". */
export function windowShown(seconds: number): string {
  const [count, unit] = seconds % 3600 === 0 ? [seconds / 3600, "hour"] : seconds % 60 === 0 ? [seconds / 60, "minute"] : [seconds, "second"];
  return `${formatAmount(count)} ${unit}${count === 1 ? "" : "s"}`;
}

/** The largest total of one spelling of the token over the legs (legTotals keeps native and wrapped SOL apart). */
function sentAmount(address: string, legs: readonly Transaction[]): ExactDecimal {
  if (legs.length === 1) return sumDecimals([legs[0]!.amount]);
  let largest: ExactDecimal = { units: 0n, scale: 0 };
  for (const total of legTotals(address, legs)) {
    if (total !== null && compare(total.exact, largest) > 0) largest = total.exact;
  }
  return largest;
}

/** A sent leg the window counts: successful, not a self-transfer, of the filter's token. */
function isCountedSend(address: string, token: string, tx: Transaction): boolean {
  return tx.status === "success" && tx.from === address && tx.to !== address && matchesToken(token, tx);
}

/** The first index of `sends` (ascending block times) whose block time is `at` or later. */
function firstAtOrAfter(sends: readonly Send[], at: number): number {
  let low = 0;
  let high = sends.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (sends[middle]!.blockTime >= at) high = middle;
    else low = middle + 1;
  }
  return low;
}

/** The first index of `sends` (ascending block times) whose block time is after `after`. */
function firstAfter(sends: readonly Send[], after: number): number {
  let low = 0;
  let high = sends.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (sends[middle]!.blockTime > after) high = middle;
    else low = middle + 1;
  }
  return low;
}

const atScale = (d: ExactDecimal, scale: number): bigint => d.units * 10n ** BigInt(scale - d.scale);

function compare(a: ExactDecimal, b: ExactDecimal): number {
  const scale = Math.max(a.scale, b.scale);
  const difference = atScale(a, scale) - atScale(b, scale);
  return difference > 0n ? 1 : difference < 0n ? -1 : 0;
}
