// The risk factors of an address (DESIGN.md section 5): label factors from the counterparties
// it has dealt with, and behavioural factors from its own recent transactions. Pure: the
// pipeline counts and sums, this decides.
import { RISK_FACTORS, type LabelCategory, type RiskFactor } from "../types.ts";
import { reachesMultiple } from "../conditions/unusual-activity.ts";
import { LAMPORTS_PER_SOL, lamportsOf } from "./lamports.ts";

/** A label of this score or more, in a category with no factor of its own, flags the address. */
export const FLAGGED_LABEL_SCORE = 50;

/**
 * sanctioned → sanctioned_counterparty; mixer → mixer_interaction; scam, hack, darknet →
 * scam_interaction (whatever the label's score: the category is the finding); any other
 * category scored ≥ 50 → flagged_counterparty; else none.
 */
export function labelFactor(category: LabelCategory, score: number): RiskFactor | null {
  switch (category) {
    case "sanctioned":
      return "sanctioned_counterparty";
    case "mixer":
      return "mixer_interaction";
    case "scam":
    case "hack":
    case "darknet":
      return "scam_interaction";
    default:
      return score >= FLAGGED_LABEL_SCORE ? "flagged_counterparty" : null;
  }
}

/** The cut-offs of the behavioural factors. A factor is active AT its cut-off (≥). */
export const RISK_RULES = Object.freeze({
  /**
   * high_velocity: transactions in the last hour ≥ 10 × the baseline (the unusual_activity
   * baseline: mean per hour over the previous 7 days, floor 1) AND ≥ 20. Ten times is twice the
   * default unusual_activity alert, so the score moves only on a real surge; the floor of 20
   * keeps a quiet wallet's first busy hour (say 10 transactions) from counting.
   */
  highVelocityMultiple: 10,
  highVelocityMinimum: 20,
  /**
   * failed_tx_ratio: ≥ 30 % of the last 24 hours' transactions failed, over ≥ 10 transactions.
   * Normal wallets fail a few percent (more in congestion); a third failing points to a bot
   * probing or spamming. Fewer than 10 transactions is too few to call it a ratio.
   */
  failedRatioPercent: 30,
  failedRatioMinimumTransactions: 10,
  /**
   * large_outflow: SOL sent out in the last 24 hours ≥ max(100 SOL, 50 % of the balance of its
   * latest account snapshot): the drain of a compromised wallet, not a whale's routine payment
   * nor dust. The service cannot tell whether the snapshot was taken before or after the sends
   * (a Helius delivery carries no balance), so the outflow is judged against the snapshot itself,
   * which sees a drain of half or more either way: taken before, the outflow is half of it; taken
   * after, the outflow exceeds what is left. The price: a drain of a third to a half is also
   * flagged when the snapshot came after it, a false alarm on the side a security desk wants.
   * (Until 2026-11-28 the cut-off was 50 % of balance + outflow, half of a day-ago holding only
   * for a snapshot taken after the sends; taken before, it took the whole balance to leave.)
   * Stakes and swaps are not outflows (see OUTFLOW_TYPES in src/pipeline/batch-facts.ts).
   */
  largeOutflowMinimumSol: 100,
  largeOutflowSharePercent: 50,
  /**
   * new_counterparty_burst: ≥ 10 addresses never dealt with before that the address sent to
   * (failed sends too), within one hour. Spraying funds to many fresh addresses is a laundering
   * (peel chain) and airdrop-farming pattern. Received transfers never count: anyone can send a
   * wallet dust from fresh addresses (see dealings.ts for what counts and what is remembered).
   */
  newCounterpartiesPerHour: 10,
  /**
   * dormant_reactivation: the wallet sends again after ≥ 90 days without sending. Long-quiet
   * wallets that wake up are often lost or stolen keys being used, so only its own sends
   * (failed ones too: the keys signed them) end a silence: a stranger's dust to a cold wallet
   * is not a wake-up, and deposits received do not keep a wallet from counting as silent. The
   * first send counted (no send before it) is not a reactivation.
   */
  dormantSeconds: 90 * 24 * 60 * 60,
});

/** What the factors are computed from, all about one address. */
export type RiskInputs = {
  /** Labels of the counterparties the address has dealt with. */
  counterpartyLabels: ReadonlyArray<{ category: LabelCategory; score: number }>;
  /** Transactions in the trailing hour and in the 168 hours before it (as unusual_activity). */
  transactionsLastHour: number;
  previous7DaysCount: number;
  /** Transactions in the last 24 hours, and how many of them failed. */
  transactions24h: number;
  failed24h: number;
  /** SOL sent out in the last 24 hours, and the balance of its latest account snapshot (0 before any), in SOL. */
  solOutflow24h: number;
  balanceSol: number;
  /** Counterparties it sent to in the last hour that it had never dealt with before (see dealings.ts). */
  newCounterpartiesLastHour: number;
  /** The silence its latest wake-up send ended: seconds since the send before it; null when none (or not within the last day). */
  secondsSincePreviousSend: number | null;
};

/**
 * large_outflow's cut-off, compared in whole lamports: the outflow is a sum of amounts that are
 * whole lamports, and so is the balance, so the edge is exact (lamports.ts). Compared as
 * doubles, ten sends totalling exactly 100 SOL summed to 99.99999999999999 and missed it. The
 * counters now add to the lamport too; rounding here also absorbs the drift of sums they kept
 * before (far below half a lamport at these sizes) and of a balance read as a double. BigInt:
 * outflow × 100 in lamports passes 2^53 from 90,000 SOL.
 */
function reachesLargeOutflow(outflowSol: number, balanceSol: number): boolean {
  // BigInt() refuses NaN: an unknown amount reaches nothing.
  if (!Number.isFinite(outflowSol) || !Number.isFinite(balanceSol)) return false;
  const outflow = BigInt(lamportsOf(outflowSol));
  const balance = BigInt(lamportsOf(balanceSol));
  const rules = RISK_RULES;
  return (
    outflow >= BigInt(rules.largeOutflowMinimumSol * LAMPORTS_PER_SOL) &&
    outflow * 100n >= BigInt(rules.largeOutflowSharePercent) * balance
  );
}

function behaviouralFactors(inputs: RiskInputs): RiskFactor[] {
  const rules = RISK_RULES;
  const active: RiskFactor[] = [];
  if (
    inputs.transactionsLastHour >= rules.highVelocityMinimum &&
    reachesMultiple(inputs.transactionsLastHour, rules.highVelocityMultiple, inputs.previous7DaysCount)
  ) {
    active.push("high_velocity");
  }
  if (reachesLargeOutflow(inputs.solOutflow24h, inputs.balanceSol)) active.push("large_outflow");
  // Compared in whole percent so that 3 of 10 is exactly 30 % (no 0.3 × 10 float error).
  if (
    inputs.transactions24h >= rules.failedRatioMinimumTransactions &&
    inputs.failed24h * 100 >= rules.failedRatioPercent * inputs.transactions24h
  ) {
    active.push("failed_tx_ratio");
  }
  if (inputs.newCounterpartiesLastHour >= rules.newCounterpartiesPerHour) active.push("new_counterparty_burst");
  const gap = inputs.secondsSincePreviousSend;
  if (gap !== null && gap >= rules.dormantSeconds) active.push("dormant_reactivation");
  return active;
}

/** The active factors of an address: distinct, in RISK_FACTORS order. */
export function riskFactors(inputs: RiskInputs): RiskFactor[] {
  const present = new Set<RiskFactor>(behaviouralFactors(inputs));
  for (const label of inputs.counterpartyLabels) {
    const factor = labelFactor(label.category, label.score);
    if (factor !== null) present.add(factor);
  }
  return RISK_FACTORS.filter((factor) => present.has(factor));
}
