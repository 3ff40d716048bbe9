// The shapes shared by the four alert conditions (DESIGN.md section 4). The conditions are
// pure: the pipeline looks up everything they need (counterparty risk, activity counts,
// score changes) and hands it in, so each decision is a plain function of its inputs.
import type { Condition, LabelCategory, RiskFactor, Transaction } from "../types.ts";
import type { LegTotal } from "./large-transfer.ts";
import type { TrailingSends } from "./large-transfer-window.ts";
import type { OwnWallets } from "./own-wallets.ts";

/** One active alert as the conditions see it. */
export type AlertRule = {
  alertId: string;
  walletId: string;
  /** The tracked wallet's address. */
  address: string;
  condition: Condition;
  threshold: number;
  /** large_transfer only: a token symbol or mint the transaction must match; null = any token. */
  token: string | null;
  /** risk_score_increase only: the score the rise is measured from (reset each time it fires). */
  baselineScore: number | null;
  /**
   * large_transfer only, with a token: the seconds of the trailing window over which the
   * wallet's sends of the token are summed (large-transfer-window.ts); null or absent: each
   * transaction alone.
   */
  windowSeconds?: number | null;
  /**
   * large_transfer only: a leg whose other side is a wallet the alert's owner also tracks is not
   * judged (own-wallets.ts); absent: false.
   */
  ignoreOwnWallets?: boolean;
  /** The caller who owns the alert (whose tracked wallets are its "own"); absent where not needed. */
  owner?: string;
};

/** One decision to fire an alert; the caller turns it into an alert_event (unique per alert + dedupeKey). */
export type Firing = {
  alertId: string;
  /** The transaction signature, or `score:<changeId>` for risk_score_increase. */
  dedupeKey: string;
  /** The value that crossed the threshold, in the threshold's unit. */
  observed: number;
  /** One human sentence, e.g. "Sent 25,000 USDC to 7xKX…9fQa (threshold 10,000)." */
  reason: string;
  transactionSignature?: string;
  /** What the reason says, as data, for receivers that branch on it (the webhook's data: pipeline/notification.ts). */
  facts?: FiringFacts;
};

/**
 * The facts behind a firing's reason. `counterparty` is the transaction's other side as the
 * evaluation saw it: a suspicious_counterparty or large_transfer firing gives its own, the
 * pipeline adds it to the other transaction firings (pipeline/transaction-firings.ts).
 */
export type FiringFacts = {
  counterparty?: CounterpartyRisk;
  /** unusual_activity: the transactions in the trailing hour (countAfter) and the hourly baseline they were held to. */
  activity?: { count: number; baselinePerHour: number };
  /** risk_score_increase: the baseline the score rose from. */
  previousScore?: number;
  /** large_transfer with a window: its length, and the sends summed in it (the firing's included); `observed` is their sum. */
  window?: { seconds: number; transfers: number };
};

/**
 * One label of a counterparty, as the evaluation read it (every source's: each is evidence a
 * compliance desk cites); `source` null for a label loaded without one, as the API says it.
 */
export type CounterpartyLabel = { category: LabelCategory; score: number; source: string | null };

/** What is known about the other side of a transaction. */
export type CounterpartyRisk = {
  address: string;
  /** The highest label score of the address (0–100), null when it carries no label. */
  labelScore: number | null;
  /** The category of that label. */
  labelCategory: LabelCategory | null;
  /** The address's own risk score when the service has scored it, else null. */
  riskScore: number | null;
  /** Every label of the address, the effective one (labelScore, labelCategory) first; absent when not looked up. */
  labels?: readonly CounterpartyLabel[];
};

/**
 * The wallet's transaction counts in one trailing hour (all statuses, all types), before and
 * after: at a transaction's own minute, before and including it; or at the wallet's newest
 * minute, before and after a batch (the pipeline's second judgment, transaction-firings.ts).
 */
export type ActivityWindow = {
  /** Transactions in the trailing 60 minutes before this one (or before the batch). */
  countBefore: number;
  /** The same window including this one (or the batch). */
  countAfter: number;
  /** Transactions in the 168 hours before the hour preceding the window's hour (the baseline). */
  previous7DaysCount: number;
  /**
   * For a late transaction (not newer than the wallet's newest minute before its batch, and within its trailing hour): the
   * trailing hour at that newest minute, before the batch, and its baseline. While that hour is
   * at or over the limit, the burst the late transaction joins has been judged already.
   */
  newestBefore?: { count: number; previous7DaysCount: number };
  /**
   * The verdict before this one: the trailing hour at the wallet's transaction judged before this
   * one (the batch's previous one, or the wallet's newest before the batch), with the baseline of
   * that transaction's own hour. The limit moves at each hour boundary: where it falls below the
   * count a burst has reached, countBefore is over the new limit already, and only this verdict,
   * below the limit it was judged by, shows that the burst has not crossed a limit yet.
   * Absent: none known (the wallet's first transaction, or a late one: see transaction-firings.ts).
   */
  previous?: { count: number; previous7DaysCount: number };
  /**
   * The end of the trailing hour judged (Unix seconds) where it is not the transaction's own
   * minute: the wallet's newest minute, for the judgment of a batch as a whole. Named in the reason.
   */
  hourTo?: number;
  /** When the window is judged (Unix seconds): a burst judged well after it happened is named by its time in the reason. */
  evaluatedAt?: number;
};

/** One change of an address's risk score (a risk_score_history row). */
export type ScoreChange = {
  id: number;
  address: string;
  previousScore: number;
  score: number;
  factors: readonly RiskFactor[];
};

/** What evaluateTransaction needs beyond the rules and the transaction. */
export type TransactionContext = {
  /** The other side of the transaction for the rules' address; null when unknown or a self-transfer. */
  counterparty: CounterpartyRisk | null;
  /**
   * Looks up another address as the evaluation sees it: for large_transfer, which names its
   * counterparty's label only when it fires (counterparty above is looked up beforehand only
   * where suspicious_counterparty judges every transaction by it).
   */
  lookupCounterparty?: (address: string) => CounterpartyRisk | null;
  /** Activity counts of the rules' address; null skips unusual_activity. */
  activity: ActivityWindow | null;
  /** large_transfer: the total of the transaction's legs in this leg's token and direction (legTotals), when the address is on more than one. */
  legTotal?: LegTotal | null;
  /**
   * large_transfer with a window: the trailing window of the rule's token ending at this
   * transaction, when the wallet sent it (null: not known, judged as without a window).
   */
  trailingSends?: (rule: AlertRule, tx: Transaction) => TrailingSends | null;
  /**
   * large_transfer with ignoreOwnWallets: which addresses the rule's owner tracks (absent:
   * nothing looked up, every leg judged), and the leg's total with the legs to and from them left
   * out (legTotalsWithoutOwn; absent or null: the leg judged by its own amount).
   */
  ownWallets?: OwnWallets;
  ownLegTotal?: (rule: AlertRule) => LegTotal | null;
};
