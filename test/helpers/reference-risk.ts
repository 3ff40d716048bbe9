// The reference model's risk engine (test/helpers/reference-model.ts), from the README's "Risk
// score" section: label factors, the score, and the behavioural factors recounted from the full
// list of what an address did. Not from src/domain.

export type Category = "sanctioned" | "mixer" | "scam" | "hack" | "darknet" | "gambling" | "flagged" | "exchange" | "defi";

// README "Risk score": the factors and their weights.
const WEIGHTS: Record<string, number> = {
  sanctioned_counterparty: 0.9,
  mixer_interaction: 0.6,
  scam_interaction: 0.5,
  flagged_counterparty: 0.3,
  large_outflow: 0.2,
  high_velocity: 0.15,
  new_counterparty_burst: 0.15,
  dormant_reactivation: 0.15,
  failed_tx_ratio: 0.1,
};
export const LABEL_FACTORS = new Set(["sanctioned_counterparty", "mixer_interaction", "scam_interaction", "flagged_counterparty"]);
export const HOUR = 3600;
export const DAY = 86_400;

/** README: sanctioned → sanctioned_counterparty; mixer → mixer; scam, hack, darknet → scam; any other with score ≥ 50 → flagged. */
export function labelFactor(label: { category: Category; score: number }): string | null {
  if (label.category === "sanctioned") return "sanctioned_counterparty";
  if (label.category === "mixer") return "mixer_interaction";
  if (label.category === "scam" || label.category === "hack" || label.category === "darknet") return "scam_interaction";
  return label.score >= 50 ? "flagged_counterparty" : null;
}

/**
 * README: round(100 × (1 − Π(1 − wᵢ))), an exact .5 rounding up. Worked in whole numbers: every
 * 1 − wᵢ is a whole number of twentieths, so the product is N / 20^k exactly.
 */
export function scoreOf(factors: Iterable<string>): number {
  let n = 1;
  let d = 1;
  for (const factor of new Set(factors)) {
    n *= Math.round((1 - WEIGHTS[factor]!) * 20);
    d *= 20;
  }
  // round(100 (d − n) / d) with halves up = floor((200 (d − n) + d) / 2d)
  return Math.floor((200 * (d - n) + d) / (2 * d));
}

/** One transaction as an address's activity: the README's "one transaction per wallet". */
export type Counted = {
  t: number;
  /** The address sent it (its own transaction, a failed one or a self-transfer too): only these end a silence. */
  sent: boolean;
  failed: boolean;
  solOut: number;
  /** Every other side of its legs, each once; none for a self-transfer. */
  counterparties: string[];
  /** Those of them it sent to (a failed send too): the only ones that can be new counterparties. */
  sentTo: string[];
  batch: number;
  /** Counted into the hour buckets: not more than 169 hours behind the address's newest hour then. */
  inHours?: boolean;
};

/** What the behavioural factors are counted from. */
export type CountedActivity = {
  counted: readonly Counted[];
  /** Per transaction: the new counterparties (addresses it sent to and had not dealt with) and the minute they count in. */
  newCounterparties: ReadonlyArray<{ minute: number; count: number }>;
  /** When the address last sent after ≥ 90 days without sending. */
  wokeAt: number | null;
  /** SOL, from its latest account snapshot. */
  balance: number;
};

/** README "Risk score": the behavioural factors of an address, from what was counted since its tracking. */
export function behaviouralFactors(s: CountedActivity): Set<string> {
  const factors = new Set<string>();
  if (s.counted.length === 0) return factors;
  const newest = Math.max(...s.counted.map((c) => c.t));
  const M = Math.floor(newest / 60);
  const H = Math.floor(newest / HOUR);
  const lastHour = s.counted.filter((c) => Math.floor(c.t / 60) >= M - 59).length;
  const previous7Days = s.counted.filter((c) => Math.floor(c.t / HOUR) >= H - 169 && Math.floor(c.t / HOUR) <= H - 2).length;
  const day = s.counted.filter((c) => Math.floor(c.t / HOUR) >= H - 23);
  const failed = day.filter((c) => c.failed).length;
  const outflow = day.reduce((sum, c) => sum + c.solOut, 0);
  const fresh = s.newCounterparties.filter((n) => n.minute >= M - 59).reduce((sum, n) => sum + n.count, 0);
  // high_velocity: transactions in the last hour ≥ 10 × its baseline and ≥ 20.
  // (× 168 on both sides: the baseline is previous7Days / 168, floor 1, and whole numbers compare exactly)
  if (lastHour >= 20 && lastHour * 168 >= 10 * Math.max(168, previous7Days)) factors.add("high_velocity");
  // large_outflow: SOL sent out in 24 h ≥ max(100 SOL, 50 % of the balance of its latest snapshot).
  if (outflow >= 100 && outflow >= 0.5 * s.balance) factors.add("large_outflow");
  // failed_tx_ratio: ≥ 30 % of the last 24 h's transactions failed, over ≥ 10.
  if (day.length >= 10 && failed * 10 >= 3 * day.length) factors.add("failed_tx_ratio");
  // new_counterparty_burst: it sent to ≥ 10 new counterparties within an hour.
  if (fresh >= 10) factors.add("new_counterparty_burst");
  // dormant_reactivation stays on for 24 h after the wake-up.
  if (s.wokeAt !== null && newest - s.wokeAt <= DAY) factors.add("dormant_reactivation");
  return factors;
}
