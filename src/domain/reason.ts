// The one-line human sentences that explain why an alert fired. They travel in every
// notification (webhook `reason`, email subject and body, SMS), so each stays short (about
// 120 characters at most, leaving room in a 160-character SMS) and factual: amounts exact,
// with thousands separators (formatAmount), addresses and mints shortened to `7xKX…9fQa`.
// Amounts of 17 significant digits on both sides keep a large_transfer sentence near 105
// characters; only amounts near the ingest maximum (1e28) pass 120, and the SMS then drops
// whole words (render-sms.ts), never part of a number.
import { plainDecimal } from "./decimal.ts";
import type { LabelCategory, RiskFactor, TransactionType } from "./types.ts";

/** Longer than this and a string is shown as `head…tail` (a symbol like "USDC" stays whole). */
const SHORTEN_ABOVE = 12;

/**
 * `7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU` → `7xKX…gAsU`; short strings unchanged.
 * Counted in characters (code points), not UTF-16 units: a token symbol of emoji cut by
 * units left half a surrogate pair, a broken character in the email and the webhook.
 */
export function shortAddress(text: string): string {
  const characters = [...text];
  if (characters.length <= SHORTEN_ABOVE) return text;
  return `${characters.slice(0, 4).join("")}…${characters.slice(-4).join("")}`;
}

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

/** How a transaction that is not a plain transfer is named after the movement. */
const KIND: Readonly<Record<TransactionType, string>> = {
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

/** "Sent 25,000 USDC to 7xKX…9fQa", "Tried to receive 5 SOL from …", "… in a swap", "… and 2 others in 3 transfers". */
function movement(facts: MovementFacts): string {
  const { direction, failed, amount, token, counterparty, type, legs } = facts;
  const verb = direction === "sent" ? (failed ? "Tried to send" : "Sent") : failed ? "Tried to receive" : "Received";
  const preposition = direction === "sent" ? "to" : "from";
  const others = legs && legs.otherCounterparties > 0 ? ` and ${legs.otherCounterparties} other${legs.otherCounterparties === 1 ? "" : "s"}` : "";
  const transfers = legs && legs.count > 1 ? ` in ${legs.count} transfers` : "";
  return `${verb} ${formatAmount(amount)} ${shortAddress(token)} ${preposition} ${shortAddress(counterparty)}${others}${transfers}${KIND[type]}`;
}

/** "Sent 25,000 USDC to 7xKX…9fQa (threshold 10,000)." */
export function largeTransferReason(facts: MovementFacts, threshold: number): string {
  return `${movement(facts)} (threshold ${formatAmount(threshold)}).`;
}

/** "Sent 5 SOL to 7xKX…9fQa (sanctioned, risk 95, threshold 75)." */
export function suspiciousCounterpartyReason(
  facts: MovementFacts,
  risk: number,
  category: LabelCategory | null,
  threshold: number,
): string {
  const label = category === null ? "" : `${category}, `;
  return `${movement(facts)} (${label}risk ${formatAmount(risk)}, threshold ${formatAmount(threshold)}).`;
}

/**
 * "12 transactions in the last hour, 6× the usual 2 per hour (threshold 5×)." `multiple` is the
 * firing's `observed`, so the sentence and the payload agree.
 */
export function unusualActivityReason(count: number, baseline: number, multiple: number, threshold: number): string {
  const noun = count === 1 ? "transaction" : "transactions";
  return (
    `${formatAmount(count)} ${noun} in the last hour, ${formatRounded(multiple)}× the usual ` +
    `${formatRounded(baseline)} per hour (threshold ${formatRounded(threshold)}×).`
  );
}

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
