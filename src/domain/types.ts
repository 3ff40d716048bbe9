// Glossary — the words used across the code base.
//
// caller        The subject (`sub`) of the JWT that made a request. Every wallet, alert and
//               notification belongs to exactly one caller; another caller's is "not found".
// address       A Solana account address (base58 of 32 bytes). Chain facts (balance, tokens,
//               NFTs, transactions, risk score) belong to the address, shared by all callers.
// wallet        A caller's tracking of an address (`wal_…`), with the caller's alias and tags.
// transaction   One from → to movement of `amount` of `token` in a chain transaction, as the
//               interface shows it. Unique by (signature, leg): a Helius item moving funds
//               between several accounts becomes one row per movement, leg 0 its principal
//               one; a natively ingested transaction is leg 0 alone.
// batch         The transactions accepted by one ingest call; the unit of evaluation work.
// label         An operator-supplied verdict on a counterparty address (sanctioned, mixer, …).
// risk factor   A named reason that raises an address's risk score (sanctioned_counterparty, …).
// alert         A caller's rule on a wallet (`alr_…`): condition + threshold + channel.
// event         One firing of an alert (`evt_…`), unique per (alert, dedupe key); possibly
//               suppressed by the alert's cooldown.
// notification  One message owed to a channel for an event or a test (`ntf_…`); its id is the
//               webhook-id and the BullMQ jobId, so retries and replays stay one message.
// attempt       One try at delivering a notification, with its outcome.

export const CONDITIONS = ["risk_score_increase", "unusual_activity", "large_transfer", "suspicious_counterparty"] as const;
export type Condition = (typeof CONDITIONS)[number];

export const NOTIFICATION_METHODS = ["email", "webhook", "sms"] as const;
export type NotificationMethod = (typeof NOTIFICATION_METHODS)[number];

export const ALERT_STATUSES = ["active", "paused", "disabled"] as const;
export type AlertStatus = (typeof ALERT_STATUSES)[number];

export const TRANSACTION_TYPES = ["transfer", "swap", "stake", "nft", "other"] as const;
export type TransactionType = (typeof TRANSACTION_TYPES)[number];

export const TRANSACTION_STATUSES = ["success", "failed"] as const;
export type TransactionStatus = (typeof TRANSACTION_STATUSES)[number];

export const LABEL_CATEGORIES = [
  "sanctioned",
  "mixer",
  "scam",
  "hack",
  "darknet",
  "gambling",
  "flagged",
  "exchange",
  "defi",
] as const;
export type LabelCategory = (typeof LABEL_CATEGORIES)[number];

export const RISK_FACTORS = [
  "sanctioned_counterparty",
  "flagged_counterparty",
  "mixer_interaction",
  "scam_interaction",
  "high_velocity",
  "large_outflow",
  "failed_tx_ratio",
  "new_counterparty_burst",
  "dormant_reactivation",
] as const;
export type RiskFactor = (typeof RISK_FACTORS)[number];

export const NOTIFICATION_STATUSES = ["pending", "retrying", "delivered", "failed"] as const;
export type NotificationStatus = (typeof NOTIFICATION_STATUSES)[number];

/** Default thresholds where the caller gives none (DESIGN.md section 4). */
export const DEFAULT_THRESHOLDS: Readonly<Record<Condition, number | undefined>> = {
  large_transfer: undefined, // required
  suspicious_counterparty: 75,
  unusual_activity: 5,
  risk_score_increase: 10,
};

/** A transaction in the interface's shape; amounts in UI units, fee in SOL, blockTime in Unix seconds. */
export type Transaction = {
  signature: string;
  /** Which movement of the chain transaction this is (0, the default, is its principal one). */
  leg?: number;
  type: TransactionType;
  amount: number;
  token: string;
  mint?: string | null;
  from: string;
  to: string;
  blockTime: number;
  slot: number;
  fee: number;
  status: TransactionStatus;
};

/** The body every channel renders (DESIGN.md section 6). */
export type NotificationPayload = {
  /** risk_alert.suppressed: a cooldown digest (`suppressed` says what the cooldown held back). */
  type: "risk_alert.triggered" | "risk_alert.test" | "risk_alert.suppressed";
  timestamp: string;
  data: {
    /** A firing's: its notification (the webhook-id) and its event, for a receiver that keeps only the body; none in one made before 2026-11-28. */
    notificationId?: string;
    eventId?: string;
    alertId: string;
    walletId: string;
    address: string;
    alias: string | null;
    condition: Condition;
    threshold: number;
    /** A test's: the alert's token filter (large_transfer), the threshold's unit; none when the alert has none. */
    token?: string;
    observed: number | null;
    riskScore: number;
    riskFactors: string[];
    transaction?: Transaction;
    /** A transaction firing's: the wallet's side of `transaction`; none for a self-transfer. */
    direction?: "sent" | "received";
    /** A transaction firing's: the other side of `transaction`, as the evaluation saw it; none for a self-transfer. */
    counterparty?: PayloadCounterparty;
    /** unusual_activity's: the transactions in the trailing hour, and the hourly baseline they were held to. */
    activity?: { count: number; baselinePerHour: number };
    /** risk_score_increase's: the baseline the score rose from. */
    previousScore?: number;
    /** A windowed large_transfer's: the window (seconds) and the sends summed in it, this one included (observed is their sum). */
    window?: { seconds: number; transfers: number };
    reason: string;
    /** A cooldown digest's (risk_alert.suppressed): what the cooldown held back; absent until its first attempt builds it. */
    suppressed?: SuppressedSummary;
  };
};

/**
 * What one cooldown window held back (pipeline/cooldown-digest.ts): the suppressed events of the
 * alert from the notification that started the cooldown to the window's end.
 */
export type SuppressedSummary = {
  count: number;
  /** When the cooldown started (the notification sent) and when it ended, ISO 8601 UTC. */
  windowStart: string;
  windowEnd: string;
  /** The first and the last suppressed event's time. */
  firstAt: string;
  lastAt: string;
  /**
   * The strongest suppressed event: the highest observed value (risk_score_increase: the highest
   * score reached), the first among equals; an untokened large_transfer's, the first of
   * largestByToken (for a digest built before 2026-11-28, the highest amount whatever its token);
   * a token-filtered large_transfer's, the highest amount, as its amounts are of one token. `counterparty` (a large_transfer's or a
   * suspicious_counterparty's) only where its transaction names one other side; none in a digest
   * built before 2026-11-28.
   */
  strongest: HeldBackFiring & { counterparty?: DigestCounterparty };
  /** The events' ids, oldest first, at most SUPPRESSED_EVENT_IDS_SHOWN (count says how many there were). */
  eventIds: string[];
  /**
   * An untokened large_transfer digest's (since 2026-11-28): each token's largest held-back firing, tokens the
   * wallet sent before tokens it only received, at most TOKENS_NAMED of them (domain/held-back-by-token.ts);
   * `strongest` is the first. Amounts of different tokens are never compared. None for a
   * token-filtered alert, the other conditions, and in a digest built before.
   */
  largestByToken?: Array<HeldBackFiring & { direction: "sent" | "received" }>;
  /** With largestByToken: how many more tokens had firings held back than it names (0: none). */
  otherTokens?: number;
};

/** A held-back firing as a digest names it: its event, observed value and reason, transaction, and when it was recorded (ISO 8601 UTC). */
export type HeldBackFiring = { eventId: string; observed: number; reason: string; transactionSignature: string | null; createdAt: string };

/**
 * A digest's strongest firing's other side: its address in full (the reason shortens it, which
 * address poisoning counts on) and its labels as the digest was built, at the cooldown's end
 * (the reason names the label of the firing's time).
 */
export type DigestCounterparty = { address: string; labels: PayloadCounterparty["labels"] };

/** A transaction's other side in a notification: its risk (null: unknown) and every label of it. */
export type PayloadCounterparty = {
  address: string;
  risk: number | null;
  /** `source` null for a label loaded without one (a notification made until 2026-11-28 carries "" for it). */
  labels: Array<{ category: LabelCategory; score: number; source: string | null }>;
};
