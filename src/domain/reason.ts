// The one-line human sentences that explain why an alert fired. They travel in every
// notification (webhook `reason`, email subject and body, SMS), so each stays short (about
// 120 characters at most, leaving room in a 160-character SMS) and factual: amounts exact,
// with thousands separators (formatAmount), mints shortened to `7xKX…9fQa`, counterparties
// to `7xKXtg…9fQaBc`.
// Amounts of 17 significant digits on both sides keep a large_transfer sentence near 109
// characters; only amounts near the ingest maximum (1e28) pass 120, and the SMS then drops
// whole words (render-sms.ts), never part of a number.
import { plainDecimal } from "./decimal.ts";
import type { LabelCategory, RiskFactor, TransactionType } from "./types.ts";

/** Longer than this and a string is shown as `head…tail` (a symbol like "USDC" stays whole). */
const SHORTEN_ABOVE = 12;

/**
 * `7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU` → `7xKX…gAsU` (`kept` characters each side);
 * short strings unchanged. Counted in characters (code points), not UTF-16 units: a token
 * symbol of emoji cut by units left half a surrogate pair, a broken character in the email and
 * the webhook.
 */
export function shortAddress(text: string, kept = 4): string {
  const characters = [...text];
  if (characters.length <= Math.max(SHORTEN_ABOVE, 2 * kept + 1)) return text;
  return `${characters.slice(0, kept).join("")}…${characters.slice(-kept).join("")}`;
}

/**
 * Characters a counterparty keeps each side: address poisoning grinds an address with the same
 * first and last 4 characters as one the victim pays, and shown 4…4 the lookalike read exactly
 * as the desk's own counterparty. Matching 6 each side takes about 16 million times the work.
 */
const COUNTERPARTY_KEPT = 6;

/** A counterparty as every reason names it: `7xKXtg…9fQaBc`. */
export const counterpartyShown = (address: string) => shortAddress(address, COUNTERPARTY_KEPT);

/**
 * An amount of money, exactly: 9999.996 → "9,999.996", 25000 → "25,000", 0.999999 → "0.999999",
 * 1e-9 → "0.000000001", 1e21 → "1,000,000,000,000,000,000,000". The shortest decimal that reads
 * back as `value` (String(value), never its exponent form) with thousands separators in the
 * integer part, nothing rounded. Rounded to 2 decimals, a 9,999.996 USDC transfer read
 * "Sent 10,000 USDC (threshold 10,000)" against a 9,999.995 threshold, and 0.999999 SOL read "1":
 * an amount that did not move, equal to the threshold it crossed. Also for risk scores and
 * their thresholds, which read as their owner set them (at most 9 decimals).
 */
export function formatAmount(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  const sign = value < 0 ? "-" : ""; // -0 reads "0"
  const [integer = "0", fraction] = plainDecimal(String(Math.abs(value))).split(".");
  const grouped = integer.replace(/\B(?=(\d{3})+$)/g, ",");
  return fraction === undefined ? `${sign}${grouped}` : `${sign}${grouped}.${fraction}`;
}

const WHOLE = new Intl.NumberFormat("en-US", { maximumFractionDigits: 2 });
const SMALL = new Intl.NumberFormat("en-US", { maximumSignificantDigits: 4 });

/**
 * A derived figure that is no amount, shown rounded: 10.238095238095237 → "10.24",
 * 0.000123456 → "0.0001235" (under 1, four significant digits, so that it never reads as "0").
 * For unusual_activity's multiples and hourly baseline. The multiple reached (`observed`) is
 * cut down to its threshold's decimals, at least 2 (observedMultiple in
 * conditions/unusual-activity.ts), so it is never below that threshold; shown here, it and its
 * threshold are rounded alike, and rounding keeps their order, so the sentence never reads a
 * multiple below the threshold it reached either (5.004 against 5.004 both read "5×"). Up to 2
 * decimals the sentence shows `observed` exactly.
 */
export function formatRounded(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  return Math.abs(value) >= 1 || value === 0 ? WHOLE.format(value) : SMALL.format(value);
}

/** "sanctioned_counterparty" → "sanctioned counterparty". */
export function factorName(factor: RiskFactor): string {
  return factor.replaceAll("_", " ");
}

export type Direction = "sent" | "received";

/** How a transaction that is not a plain transfer is named after its movement (or movements). */
export const KIND: Readonly<Record<TransactionType, string>> = {
  transfer: "",
  swap: " in a swap",
  stake: " in a stake",
  nft: " in an NFT trade",
  other: "",
};

export type MovementFacts = {
  direction: Direction;
  failed: boolean;
  amount: number;
  /** As a person should read it (tokenShown in tokens.ts); shortened here when long. */
  token: string;
  counterparty: string;
  type: TransactionType;
  /** When the amount is the total of several legs of one transaction: how many, and to (or from) how many other addresses than `counterparty`. */
  legs?: { count: number; otherCounterparties: number };
};

/** "Sent 25,000 USDC to 7xKXtg…9fQaBc", "Tried to receive 5 SOL from …", "… in a swap", "… and 2 others in 3 transfers". */
function movement(facts: MovementFacts): string {
  const { direction, failed, amount, token, counterparty, type, legs } = facts;
  const verb = direction === "sent" ? (failed ? "Tried to send" : "Sent") : failed ? "Tried to receive" : "Received";
  const preposition = direction === "sent" ? "to" : "from";
  const others = legs && legs.otherCounterparties > 0 ? ` and ${legs.otherCounterparties} other${legs.otherCounterparties === 1 ? "" : "s"}` : "";
  const transfers = legs && legs.count > 1 ? ` in ${legs.count} transfers` : "";
  return `${verb} ${formatAmount(amount)} ${shortAddress(token)} ${preposition} ${counterpartyShown(counterparty)}${others}${transfers}${KIND[type]}`;
}

/**
 * "Sent 25,000 USDC to 7xKXtg…9fQaBc (threshold 10,000)."; to or from a labelled address, its
 * label's category as suspiciousCounterpartyReason names it: "… (sanctioned, threshold 10,000)."
 * Until 2026-11-28 a large transfer to an OFAC-listed address said nothing of it, in the SMS or
 * anywhere else but the email's label row, though the evaluation knew.
 */
export function largeTransferReason(facts: MovementFacts, threshold: number, category: LabelCategory | null = null): string {
  const label = category === null ? "" : `${category}, `;
  return `${movement(facts)} (${label}threshold ${formatAmount(threshold)}).`;
}

/** "Sent 5 SOL to 7xKXtg…9fQaBc (sanctioned, risk 95, threshold 75)." */
export function suspiciousCounterpartyReason(
  facts: MovementFacts,
  risk: number,
  category: LabelCategory | null,
  threshold: number,
): string {
  const label = category === null ? "" : `${category}, `;
  return `${movement(facts)} (${label}risk ${formatAmount(risk)}, threshold ${formatAmount(threshold)}).`;
}

/** A burst judged more than this after its newest transaction is named by its time: it was not "the last hour" (a backfill, a backlog). */
const LIVE_WITHIN_SECONDS = 5 * 60;

export type ActivityFacts = {
  /** Transactions in the trailing hour, the newest included. */
  count: number;
  /** The wallet's mean per hour over the baseline period, as measured (0: no earlier activity). */
  usualPerHour: number;
  /** What the multiple is of: usualPerHour, or the floor when that is higher. */
  baseline: number;
  /** Block time of the hour's newest transaction (Unix seconds): the hour ends at its minute. */
  hourTo: number;
  /** When the burst was judged (Unix seconds); unknown: taken as at once. */
  evaluatedAt?: number;
};

/**
 * "12 transactions in the last hour, 6× the usual 2 per hour (threshold 5×)."; judged late,
 * "… in the hour to 05:54 UTC, …" (with the date when it is not the judgment's day); on a
 * wallet quieter than the floor, "… 5× the floor of 1 per hour (threshold 5×).", and with no
 * earlier activity at all "… (no earlier activity, threshold 5×).": the floor is no measured
 * usual rate. `multiple` is the firing's `observed`, so the sentence and the payload agree.
 */
export function unusualActivityReason(facts: ActivityFacts, multiple: number, threshold: number): string {
  const { count, usualPerHour, baseline } = facts;
  const noun = count === 1 ? "transaction" : "transactions";
  const floored = baseline > usualPerHour;
  const rate = `${floored ? "the floor of" : "the usual"} ${formatRounded(baseline)} per hour`;
  const why = floored && usualPerHour === 0 ? "no earlier activity, " : "";
  return (
    `${formatAmount(count)} ${noun} ${whichHour(facts.hourTo, facts.evaluatedAt)}, ${formatRounded(multiple)}× ${rate} ` +
    `(${why}threshold ${formatRounded(threshold)}×).`
  );
}

/** "in the last hour", or, judged late, "in the hour to 05:54 UTC" / "in the hour to 2026-11-26 05:54 UTC". */
function whichHour(hourTo: number, evaluatedAt: number | undefined): string {
  const end = new Date(hourTo * 1000);
  if (evaluatedAt === undefined || !(evaluatedAt - hourTo > LIVE_WITHIN_SECONDS) || Number.isNaN(end.getTime())) return "in the last hour";
  const day = (date: Date) => `${date.getUTCFullYear()}-${two(date.getUTCMonth() + 1)}-${two(date.getUTCDate())}`;
  const sameDay = day(end) === day(new Date(evaluatedAt * 1000));
  return `in the hour to ${sameDay ? "" : `${day(end)} `}${two(end.getUTCHours())}:${two(end.getUTCMinutes())} UTC`;
}

const two = (n: number) => String(n).padStart(2, "0");

/** How many factors a score-increase sentence names before "+N more". */
const FACTORS_NAMED = 2;

/**
 * "Risk score rose 36 points, from 60 to 96 (threshold 10): sanctioned counterparty, mixer interaction."
 * `factors` should come most important first (explainScore's order).
 */
export function riskScoreIncreaseReason(
  baseline: number,
  score: number,
  threshold: number,
  factors: readonly RiskFactor[],
): string {
  const rise = score - baseline;
  const head = `Risk score rose ${rise} ${rise === 1 ? "point" : "points"}, from ${baseline} to ${score} (threshold ${threshold})`;
  if (factors.length === 0) return `${head}.`;
  const named = factors.slice(0, FACTORS_NAMED).map(factorName).join(", ");
  const more = factors.length > FACTORS_NAMED ? ` +${factors.length - FACTORS_NAMED} more` : "";
  return `${head}: ${named}${more}.`;
}
