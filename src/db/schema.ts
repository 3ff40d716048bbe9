// PostgreSQL is the source of truth; Redis only holds work that can be rebuilt from here.
// Amounts are `numeric` so that no SOL or token amount is rounded on its way through the
// database; the API turns them into JSON numbers at the edge.
import { sql } from "drizzle-orm";
import {
  bigint,
  customType,
  bigserial,
  boolean,
  check,
  index,
  integer,
  json,
  jsonb,
  numeric,
  pgTable,
  primaryKey,
  smallint,
  text,
  timestamp,
  uniqueIndex,
} from "drizzle-orm/pg-core";

/**
 * Text compared byte by byte (COLLATE "C"), for the identifiers the pipeline inserts, looks up
 * and sorts in bulk: base58 signatures and addresses and our own ids are ASCII, so byte order
 * is as good an order as any, while the database's default collation (a locale's) pays for a
 * strcoll on every index comparison. Measured on ingest's batch insert: about 12 % less
 * Postgres CPU per transaction (README, Benchmarks).
 */
const identifier = customType<{ data: string }>({ dataType: () => 'text COLLATE "C"' });

/** A webhook secret that a rotation replaced: it keeps signing until `expiresAt` (ISO 8601). */
export type PreviousSecret = { secret: string; expiresAt: string };

/** An alert's settings as an event was judged by them (alert_events.judged_settings). */
export type JudgedSettings = { threshold: string; token: string | null; cooldownSeconds: number };

const createdAt = () => timestamp("created_at", { withTimezone: true, mode: "date" }).notNull().defaultNow();
const updatedAt = () => timestamp("updated_at", { withTimezone: true, mode: "date" }).notNull().defaultNow();

/** A caller (`owner` = the token's `sub`) tracks an address. */
export const trackedWallets = pgTable(
  "tracked_wallets",
  {
    id: text("id").primaryKey(),
    owner: text("owner").notNull(),
    address: text("address").notNull(),
    alias: text("alias"),
    tags: text("tags").array().notNull().default(sql`'{}'::text[]`),
    trackedAt: timestamp("tracked_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex("tracked_wallets_owner_address_key").on(t.owner, t.address),
    index("tracked_wallets_address_idx").on(t.address),
  ],
);

/** What the service knows of an address, whoever tracks it. One row per address. */
export const addressState = pgTable("address_state", {
  address: identifier("address").primaryKey(),
  balance: numeric("balance").notNull().default("0"),
  tokenAccountCount: integer("token_account_count").notNull().default(0),
  nftCount: integer("nft_count").notNull().default(0),
  riskScore: smallint("risk_score").notNull().default(0),
  riskFactors: text("risk_factors").array().notNull().default(sql`'{}'::text[]`),
  updatedAt: updatedAt(),
  /**
   * When the latest account snapshot (balance, token accounts, NFTs) was stored; null before
   * any. Set by replaceAccountSnapshots only: updated_at moves with every score write too.
   */
  snapshotAt: timestamp("snapshot_at", { withTimezone: true, mode: "date" }),
});

/**
 * What ingest counts per address, in the statement that stores the transactions. Apart from
 * address_state on purpose: ingest moves these on every batch, the evaluation writes scores
 * into address_state, and sharing rows made each wait on the other's row locks and left the
 * evaluation's reads walking the versions that ingest kept adding.
 */
export const addressActivity = pgTable("address_activity", {
  address: identifier("address").primaryKey(),
  /** blockTime (Unix seconds) of the newest transaction seen for the address. */
  lastActivity: bigint("last_activity", { mode: "number" }),
  /** Stored transactions the address is from or to (a self-transfer once): the unfiltered history total. */
  transactionCount: bigint("transaction_count", { mode: "number" }).notNull().default(0),
});

export const tokenAccounts = pgTable(
  "token_accounts",
  {
    address: text("address").notNull(),
    mint: text("mint").notNull(),
    symbol: text("symbol").notNull(),
    balance: numeric("balance").notNull(),
    usdValue: numeric("usd_value").notNull(),
  },
  (t) => [primaryKey({ columns: [t.address, t.mint] })],
);

export const nfts = pgTable(
  "nfts",
  {
    address: text("address").notNull(),
    mint: text("mint").notNull(),
    name: text("name").notNull(),
    collection: text("collection").notNull(),
    floorPrice: numeric("floor_price").notNull(),
  },
  (t) => [primaryKey({ columns: [t.address, t.mint] })],
);

/** One row per accepted ingest batch: the unit that the evaluation queue works on. */
export const ingestBatches = pgTable(
  "ingest_batches",
  {
    id: identifier("id").primaryKey(),
    transactionCount: integer("transaction_count").notNull(),
    createdAt: createdAt(),
    evaluatedAt: timestamp("evaluated_at", { withTimezone: true, mode: "date" }),
  },
  (t) => [index("ingest_batches_unevaluated_idx").on(t.createdAt).where(sql`${t.evaluatedAt} is null`)],
);

/**
 * The token that Redis's `<prefix>:activity-complete` key must hold (src/pipeline/activity-reseed-watch.ts):
 * one row, written at the first check of a deployment that had none (a new one, or the first
 * start after the upgrade that added it) and anew by each reseed. Kept here because it must
 * outlive a Redis loss: the key gone, or holding another token, while this row stands is the loss.
 */
export const activityCountersMark = pgTable(
  "activity_counters_mark",
  {
    /** Always true: the primary key that allows one row. */
    single: boolean("single").primaryKey().default(true),
    token: text("token").notNull(),
    /** 'first check' or 'reseeded'. */
    how: text("how").notNull(),
    setAt: timestamp("set_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
  },
  (t) => [check("activity_counters_mark_single_check", sql`${t.single}`)],
);

/**
 * Transactions, one row per movement: unique by (signature, leg); paged per address through
 * the from/to indexes.
 */
export const transactions = pgTable(
  "transactions",
  {
    signature: identifier("signature").notNull(),
    leg: smallint("leg").notNull().default(0),
    type: text("type").notNull(),
    amount: numeric("amount").notNull(),
    token: text("token").notNull(),
    mint: text("mint"),
    fromAddress: identifier("from_address").notNull(),
    toAddress: identifier("to_address").notNull(),
    blockTime: bigint("block_time", { mode: "number" }).notNull(),
    slot: bigint("slot", { mode: "number" }).notNull(),
    fee: numeric("fee").notNull(),
    status: text("status").notNull(),
    batchId: identifier("batch_id").notNull(),
    ingestedAt: timestamp("ingested_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.signature, t.leg] }),
    index("transactions_from_newest_idx").on(t.fromAddress, t.blockTime.desc(), t.slot.desc(), t.signature, t.leg),
    index("transactions_to_newest_idx").on(t.toAddress, t.blockTime.desc(), t.slot.desc(), t.signature, t.leg),
    index("transactions_batch_idx").on(t.batchId),
  ],
);

/**
 * Helius webhook items that POST /v1/ingest/helius refused (the dead letters of the webhook):
 * the rest of their delivery was stored and answered 202, so Helius will not send them again;
 * each is kept here whole for an operator to inspect, fix and post again. `item` is json, not
 * jsonb: json stores the item's text as given, while jsonb refuses a string holding \u0000 (an
 * on-chain name padded with NULs, say), which is just the kind of item that gets refused. One row
 * per distinct item (its text's SHA-256): a retried or replayed delivery adds none, and its
 * refusal of an item kept already rewrites the row's errors, count and last time, so that the
 * row says why the item is refused now, not why it was once.
 */
export const heliusRejectedItems = pgTable(
  "helius_rejected_items",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    /** The first refusal's time. */
    receivedAt: timestamp("received_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
    /** How many deliveries refused the item (a delivery holding it twice counts once). */
    refusals: integer("refusals").notNull().default(1),
    /** The latest refusal's time, the one `errors` are from. */
    lastRefusedAt: timestamp("last_refused_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
    /** The item's signature when it has a readable one. */
    signature: text("signature"),
    /** [{ path, message }], as in the latest refusal's 202's `rejected`. */
    errors: jsonb("errors").$type<Array<{ path: string; message: string }>>().notNull(),
    item: json("item").notNull(),
    itemSha256: text("item_sha256").notNull(),
  },
  (t) => [
    uniqueIndex("helius_rejected_items_item_sha256_key").on(t.itemSha256),
    index("helius_rejected_items_signature_idx").on(t.signature),
  ],
);

/**
 * Counterparty labels loaded by operators: one per address and source (OFAC's list, each vendor's),
 * so that one list's import never replaces or removes another list's verdict on the same address.
 * `source` is '' for the labels loaded without one (the API's null). `updated_by` is the caller (the
 * JWT's sub) of the PUT that last changed the row (a label loaded again as it was is not
 * rewritten: label_changes has every change, with its load).
 */
export const riskLabels = pgTable(
  "risk_labels",
  {
    address: identifier("address").notNull(),
    category: text("category").notNull(),
    score: smallint("score").notNull(),
    source: identifier("source").notNull().default(""),
    updatedBy: text("updated_by"),
    updatedAt: updatedAt(),
  },
  (t) => [primaryKey({ columns: [t.address, t.source] })],
);

/**
 * Label changes whose wallets are still to be rescored (the outbox of src/pipeline/relabel.ts):
 * written in the transaction that changes the labels, deleted by the last chunk of the rescore of
 * the tracked addresses that dealt with them (each chunk moves `created_at` forward, its lease);
 * the reconciler rescores what a lost process left.
 */
export const labelRescores = pgTable("label_rescores", {
  id: bigserial("id", { mode: "number" }).primaryKey(),
  addresses: text("addresses").array().notNull(),
  /**
   * The last tracked address rescored (in address order), set by each chunk as it commits: a run
   * that takes the rescore over continues after it. Null until the first chunk commits.
   */
  doneThrough: identifier("done_through"),
  createdAt: createdAt(),
  /**
   * The label load that owes it (label_changes.load_id), named in the score changes' cause
   * (`labels:<load id>`) by whoever finishes it, the reconciler too. Null for rescores owed
   * before migration 0028.
   */
  loadId: text("load_id"),
});

/** Every change of an address's risk score; its id is the dedupe key of risk_score_increase. */
export const riskScoreHistory = pgTable(
  "risk_score_history",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    address: text("address").notNull(),
    previousScore: smallint("previous_score").notNull(),
    score: smallint("score").notNull(),
    factors: text("factors").array().notNull(),
    cause: text("cause").notNull(),
    createdAt: createdAt(),
    evaluatedAt: timestamp("evaluated_at", { withTimezone: true, mode: "date" }),
  },
  (t) => [
    // An address's newest change (max(id)), which a risk_score_increase alert takes as its
    // baseline when created or resumed (alerts.ts, NEWEST_SCORE_CHANGE_OF). By id, not
    // created_at: ids follow the order of one address's changes, start times do not.
    index("risk_score_history_address_id_idx").on(t.address, t.id),
    // The changes not evaluated yet, by address: an evaluation locks those of the addresses it
    // scores (lockOpenScoreChanges), and reads only them. With the open changes keyed by id
    // alone, Postgres planned on few open ones read every open change to find them, and a
    // large relabel makes them thousands. The reconciler reads them all, oldest first (few).
    index("risk_score_history_unevaluated_address_idx").on(t.address, t.id).where(sql`${t.evaluatedAt} is null`),
  ],
);

/**
 * What each label load changed (PUT and DELETE /v1/risk/labels), append-only: one row per label
 * whose category or score it set, changed or removed (a label loaded again as it was is no
 * change), with the load it came in (`load_id`, the request's), who made it (the token's sub)
 * and when. risk_score_history's `labels:<load id>` cause points back here.
 */
export const labelChanges = pgTable(
  "label_changes",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    loadId: text("load_id").notNull(),
    at: timestamp("at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
    by: text("by").notNull(),
    address: identifier("address").notNull(),
    source: identifier("source").notNull(),
    /** Null when the load added the label. */
    previousCategory: text("previous_category"),
    previousScore: smallint("previous_score"),
    /** Null when the load removed the label. */
    category: text("category"),
    score: smallint("score"),
  },
  (t) => [index("label_changes_address_idx").on(t.address, t.id), index("label_changes_load_idx").on(t.loadId)],
);

/**
 * Every change of an alert, append-only: its creation, each edit of its settings or status by
 * its owner (PATCH), the service's own (disabled after 24 h of failures), a secret rotation and
 * its deletion, with who (the token's sub, or `service`) and when, and each changed setting's
 * value before and after (never a secret). No foreign key: the history outlives the alert (the
 * archive, deleted_alerts, keeps the same id).
 */
export const alertChanges = pgTable(
  "alert_changes",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    alertId: text("alert_id").notNull(),
    owner: text("owner").notNull(),
    at: timestamp("at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
    by: text("by").notNull(),
    action: text("action").notNull(),
    /** Per changed setting (the API's names): [before, after]; on creation, every setting's value as [null, value]. */
    changes: jsonb("changes").$type<Record<string, [unknown, unknown]>>().notNull(),
  },
  (t) => [index("alert_changes_alert_idx").on(t.alertId, t.id)],
);

export const alerts = pgTable(
  "alerts",
  {
    id: text("id").primaryKey(),
    owner: text("owner").notNull(),
    walletId: text("wallet_id")
      .notNull()
      .references(() => trackedWallets.id, { onDelete: "cascade" }),
    condition: text("condition").notNull(),
    threshold: numeric("threshold", { precision: 38, scale: 9 }).notNull(),
    token: text("token"),
    /**
     * large_transfer with a token only: the trailing window (seconds) over which the wallet's
     * sends of the token are summed (domain/conditions/large-transfer-window.ts); null: each
     * transaction alone. Set at creation only (migration 0029).
     */
    windowSeconds: integer("window_seconds"),
    /**
     * large_transfer only: a transfer whose other side is a wallet the alert's owner also
     * tracks (at evaluation) is not judged by it (domain/conditions/own-wallets.ts). Set at
     * creation only (migration 0030).
     */
    ignoreOwnWallets: boolean("ignore_own_wallets").notNull().default(false),
    notificationMethod: text("notification_method").notNull(),
    webhookUrl: text("webhook_url"),
    recipient: text("recipient"),
    cooldownSeconds: integer("cooldown_seconds").notNull().default(0),
    status: text("status").notNull().default("active"),
    webhookSecret: text("webhook_secret"),
    /** The latest rotate-secret: a create replayed after it (Idempotency-Key) is a 409, not the new secret. */
    secretRotatedAt: timestamp("secret_rotated_at", { withTimezone: true, mode: "date" }),
    /** Secrets replaced within their grace period, newest first, each still signing until its expiry. */
    previousWebhookSecrets: jsonb("previous_webhook_secrets").$type<PreviousSecret[]>().notNull().default([]),
    /** risk_score_increase: the score the next rise is measured from. */
    baselineScore: smallint("baseline_score"),
    /**
     * risk_score_increase: the newest risk_score_history id of its address when the alert was
     * created or last resumed. The baseline (that score) takes in every change up to it, so
     * only later changes are the alert's: one still waiting for its evaluation (a backlog, a
     * change made while the alert was paused) is not judged against a baseline made after it.
     * 0 for the other conditions, and for alerts older than the column (every change theirs).
     */
    baselineChangeId: bigint("baseline_change_id", { mode: "number" }).notNull().default(0),
    /**
     * unusual_activity: created, resumed or given a new threshold, and not judged since. Its
     * first judgment fires if the trailing hour is at or over the limit already (a burst in
     * progress), not only on a crossing, unless the alert has an event within an hour of it (it
     * reported that burst: record-events.ts); the evaluation that judges it clears the mark. In the triggers of 0002 (migration 0024): the workers cache it.
     */
    activityArmed: boolean("activity_armed").notNull().default(false),
    lastNotifiedAt: timestamp("last_notified_at", { withTimezone: true, mode: "date" }),
    /** Start of the current run of permanent delivery failures (alert health). */
    failingSince: timestamp("failing_since", { withTimezone: true, mode: "date" }),
    disabledReason: text("disabled_reason"),
    /**
     * When the service disabled the alert (alert health); cleared when the owner sets a status.
     * A notice job carries it, so a notice of an earlier disabling is dropped, not sent twice.
     */
    disabledAt: timestamp("disabled_at", { withTimezone: true, mode: "date" }),
    /**
     * The notice of that disabling is still owed to the owner: set with disabled_at, cleared by
     * the notice job once it is done with it (sent, refused, or moot) and when the owner sets a
     * status. The reconciler queues the notice again while it stays set and no job holds it.
     */
    disabledNoticeOwed: boolean("disabled_notice_owed").notNull().default(false),
    /**
     * The owner's address for the disabled-alert notice: the token's email claim at creation,
     * refreshed by each PATCH whose token has one (alert health). Never shown by the API.
     */
    ownerEmail: text("owner_email"),
    /** The create request's Idempotency-Key header, if it had one: a retry answers with this alert. */
    idempotencyKey: text("idempotency_key"),
    /** A fingerprint of that request's body: the same key with another body is a 409, not a replay. */
    idempotencyFingerprint: text("idempotency_fingerprint"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    index("alerts_owner_created_idx").on(t.owner, t.createdAt),
    index("alerts_wallet_idx").on(t.walletId),
    uniqueIndex("alerts_owner_idempotency_key").on(t.owner, t.idempotencyKey).where(sql`${t.idempotencyKey} is not null`),
    index("alerts_disabled_notice_owed_idx").on(t.id).where(sql`${t.disabledNoticeOwed}`),
  ],
);

/**
 * One row: a counter that triggers (migration 0002) move forward in the same transaction as any
 * change to what evaluation reads of alerts and tracked wallets (not the pipeline's own writes
 * of last_notified_at and baseline_score). Workers keep the active alerts in memory and reload
 * them when it moves.
 */
export const alertRulesVersion = pgTable("alert_rules_version", {
  id: smallint("id").primaryKey().default(1),
  version: bigint("version", { mode: "number" }).notNull().default(0),
});

export const alertEvents = pgTable(
  "alert_events",
  {
    id: text("id").primaryKey(),
    alertId: text("alert_id")
      .notNull()
      .references(() => alerts.id, { onDelete: "cascade" }),
    dedupeKey: text("dedupe_key").notNull(),
    condition: text("condition").notNull(),
    observed: numeric("observed").notNull(),
    suppressed: boolean("suppressed").notNull().default(false),
    transactionSignature: text("transaction_signature"),
    reason: text("reason").notNull(),
    createdAt: createdAt(),
    /**
     * The alert's settings the event was judged by (threshold, token, cooldownSeconds), as they
     * were then: a later PATCH does not change what a past event was held to. Null for events
     * recorded before migration 0028.
     */
    judgedSettings: jsonb("judged_settings").$type<JudgedSettings>(),
    /** The wallet's risk score and factors with the event (the notification's), suppressed or not; null before 0028. */
    riskScore: smallint("risk_score"),
    riskFactors: text("risk_factors").array(),
  },
  (t) => [
    uniqueIndex("alert_events_alert_dedupe_key").on(t.alertId, t.dedupeKey),
    index("alert_events_alert_newest_idx").on(t.alertId, t.createdAt.desc(), t.id),
  ],
);

export const notifications = pgTable(
  "notifications",
  {
    id: text("id").primaryKey(),
    alertId: text("alert_id")
      .notNull()
      .references(() => alerts.id, { onDelete: "cascade" }),
    eventId: text("event_id").references(() => alertEvents.id, { onDelete: "cascade" }),
    channel: text("channel").notNull(),
    destination: text("destination").notNull(),
    payload: jsonb("payload").notNull(),
    /** pending → delivered | retrying → delivered | failed */
    status: text("status").notNull().default("pending"),
    /**
     * The retry schedule's steps taken (notify/retry-steps.ts: one per attempt while no slot of
     * RETRY_SCHEDULE is longer than 30 s, a slot's steps for a recipient's failure otherwise);
     * 0 before the first attempt. The attempts made are delivery_attempts' rows.
     */
    attemptCount: integer("attempt_count").notNull().default(0),
    nextAttemptAt: timestamp("next_attempt_at", { withTimezone: true, mode: "date" }),
    createdAt: createdAt(),
    deliveredAt: timestamp("delivered_at", { withTimezone: true, mode: "date" }),
    updatedAt: updatedAt(),
    /** The provider's id of the message that got through (a Twilio SMS's sid), which its status callbacks name. */
    providerMessageId: text("provider_message_id"),
    /** The carrier's last word on an SMS, from Twilio's status callbacks: sent, delivered, undelivered, failed… */
    carrierStatus: text("carrier_status"),
    /** Twilio's error code with an undelivered or failed status (30003 unreachable handset, 30007 filtered…). */
    carrierErrorCode: integer("carrier_error_code"),
    carrierUpdatedAt: timestamp("carrier_updated_at", { withTimezone: true, mode: "date" }),
    /**
     * Its place in its alert's list (GET /v1/risk/alerts/{id}/notifications), which is the order
     * the alert's notifications were committed in: a trigger (migration 0027) takes it from a
     * sequence under the alert's row lock, held until commit, so the alert's next one always
     * gets a higher number, and a poller's cursor never passes one that commits later. The ids
     * cannot do that: each is stamped with its writer's clock before the lock is taken. 0 for
     * the notifications made before 0027 (listed first, by id).
     */
    listSeq: bigint("list_seq", { mode: "number" }).notNull().default(0),
  },
  (t) => [
    index("notifications_alert_idx").on(t.alertId),
    // An alert's notifications in list order, from a cursor (queries/notification-list.ts).
    index("notifications_alert_list_idx").on(t.alertId, t.listSeq, t.id),
    // What deleting an event (with its alert) looks its notifications up by, for the cascade:
    // without it each deleted event read the whole table (2,000 events over 200,000
    // notifications took 49 s, holding the alert's lock, against 22 ms with it).
    index("notifications_event_idx").on(t.eventId),
    index("notifications_open_idx").on(t.createdAt).where(sql`${t.status} in ('pending', 'retrying')`),
    index("notifications_provider_message_idx").on(t.providerMessageId).where(sql`${t.providerMessageId} is not null`),
  ],
);

export const deliveryAttempts = pgTable(
  "delivery_attempts",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    notificationId: text("notification_id")
      .notNull()
      .references(() => notifications.id, { onDelete: "cascade" }),
    at: timestamp("at", { withTimezone: true, mode: "date" }).notNull(),
    durationMs: integer("duration_ms").notNull(),
    statusCode: integer("status_code"),
    error: text("error"),
    responseBody: text("response_body"),
    /**
     * Where this attempt went (the webhook URL, email address or phone number of the alert
     * then): an alert's destination may change between attempts, and the notification row keeps
     * only the latest. Null for attempts recorded before migration 0028.
     */
    destination: text("destination"),
  },
  (t) => [index("delivery_attempts_notification_idx").on(t.notificationId, t.at)],
);

/**
 * The cooldown digests (pipeline/cooldown-digest.ts): one per alert and cooldown window that held
 * back an event, made with the window's first suppressed event. Its notification (no event, a
 * risk_alert.suppressed payload) is due at the window's end. A table of its own rather than
 * columns of notifications: the key is what keeps replays and concurrent evaluations to one
 * digest, and notifications keep the columns the archive (deleted_notifications) mirrors.
 * The window is the notification that started the cooldown (window_start, its time) and the
 * end the alert's cooldown gave it when the digest was made.
 */
export const cooldownDigests = pgTable(
  "cooldown_digests",
  {
    alertId: text("alert_id")
      .notNull()
      .references(() => alerts.id, { onDelete: "cascade" }),
    windowStart: timestamp("window_start", { withTimezone: true, mode: "date" }).notNull(),
    windowEnd: timestamp("window_end", { withTimezone: true, mode: "date" }).notNull(),
    notificationId: text("notification_id")
      .notNull()
      .references(() => notifications.id, { onDelete: "cascade" }),
  },
  (t) => [
    primaryKey({ columns: [t.alertId, t.windowStart, t.windowEnd] }),
    uniqueIndex("cooldown_digests_notification_key").on(t.notificationId),
  ],
);

/**
 * A Twilio status callback that came before the attempt carrying its message's sid was recorded
 * (queries/carrier-status.ts): kept until that record claims it, or for an hour. One row per
 * sid, holding what the callbacks so far add up to by the rules a notification's carrier status
 * follows. Plain text like provider_message_id, which it is compared with.
 */
export const earlyCarrierStatuses = pgTable(
  "early_carrier_statuses",
  {
    messageSid: text("message_sid").primaryKey(),
    status: text("status").notNull(),
    errorCode: integer("error_code"),
    receivedAt: timestamp("received_at", { withTimezone: true, mode: "date" }).notNull(),
  },
  (t) => [index("early_carrier_statuses_received_idx").on(t.receivedAt)],
);

/*
 * The archive of deleted alerts (queries/alert-archive.ts): what an alert fired and what was
 * sent stays on record after its owner deletes the alert or its wallet, written in the
 * transaction that deletes them. Kept until an operator prunes it (README, Risk alerts). No
 * foreign keys: the rows they would point at are the ones deleted.
 *
 * Each record keeps its own table, mirroring the live one's columns, rather than one jsonb
 * document per alert or event: the archive is written by one INSERT … SELECT per table, so an
 * alert with 200,000 notifications costs a copy of its rows (linear, no row built in memory,
 * no document past jsonb's 255 MB limit), and a compliance desk reads it with the same SQL as
 * the live tables (join on alert_id, filter on status, sort by created_at).
 */

/** A deleted alert: its settings as they were, without its webhook secrets, and who deleted it and how. */
export const deletedAlerts = pgTable(
  "deleted_alerts",
  {
    id: text("id").primaryKey(),
    owner: text("owner").notNull(),
    walletId: text("wallet_id").notNull(),
    walletAddress: text("wallet_address").notNull(),
    condition: text("condition").notNull(),
    /**
     * The alert's settings and state, named after the alerts columns: threshold, token,
     * notification_method, webhook_url, recipient, owner_email, cooldown_seconds, status… Built
     * from a list of the columns to keep, so that a secret column added later stays out.
     */
    settings: jsonb("settings").$type<Record<string, unknown>>().notNull(),
    createdAt: timestamp("created_at", { withTimezone: true, mode: "date" }).notNull(),
    deletedAt: timestamp("deleted_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
    /** The caller (the token's sub) whose DELETE took the alert. */
    deletedBy: text("deleted_by").notNull(),
    /** 'alert deleted' (DELETE of the alert) or 'wallet deleted' (DELETE of its wallet). */
    reason: text("reason").notNull(),
  },
  (t) => [
    index("deleted_alerts_owner_deleted_idx").on(t.owner, t.deletedAt),
    index("deleted_alerts_wallet_idx").on(t.walletId),
    check("deleted_alerts_reason_check", sql`${t.reason} in ('alert deleted', 'wallet deleted')`),
  ],
);

/** The events of deleted alerts, as alert_events held them. */
export const deletedAlertEvents = pgTable(
  "deleted_alert_events",
  {
    id: text("id").primaryKey(),
    alertId: text("alert_id").notNull(),
    dedupeKey: text("dedupe_key").notNull(),
    condition: text("condition").notNull(),
    observed: numeric("observed").notNull(),
    suppressed: boolean("suppressed").notNull(),
    transactionSignature: text("transaction_signature"),
    reason: text("reason").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true, mode: "date" }).notNull(),
    judgedSettings: jsonb("judged_settings").$type<JudgedSettings>(),
    riskScore: smallint("risk_score"),
    riskFactors: text("risk_factors").array(),
  },
  (t) => [index("deleted_alert_events_alert_idx").on(t.alertId, t.createdAt)],
);

/** The notifications of deleted alerts, as notifications held them: a pending one was never sent. */
export const deletedNotifications = pgTable(
  "deleted_notifications",
  {
    id: text("id").primaryKey(),
    alertId: text("alert_id").notNull(),
    eventId: text("event_id"),
    channel: text("channel").notNull(),
    destination: text("destination").notNull(),
    payload: jsonb("payload").notNull(),
    status: text("status").notNull(),
    attemptCount: integer("attempt_count").notNull(),
    nextAttemptAt: timestamp("next_attempt_at", { withTimezone: true, mode: "date" }),
    createdAt: timestamp("created_at", { withTimezone: true, mode: "date" }).notNull(),
    deliveredAt: timestamp("delivered_at", { withTimezone: true, mode: "date" }),
    updatedAt: timestamp("updated_at", { withTimezone: true, mode: "date" }).notNull(),
    providerMessageId: text("provider_message_id"),
    carrierStatus: text("carrier_status"),
    carrierErrorCode: integer("carrier_error_code"),
    carrierUpdatedAt: timestamp("carrier_updated_at", { withTimezone: true, mode: "date" }),
    listSeq: bigint("list_seq", { mode: "number" }).notNull().default(0),
  },
  (t) => [index("deleted_notifications_alert_idx").on(t.alertId)],
);

/** The delivery attempts of deleted alerts' notifications (join deleted_notifications for their alert). */
export const deletedDeliveryAttempts = pgTable(
  "deleted_delivery_attempts",
  {
    id: bigint("id", { mode: "number" }).primaryKey(),
    notificationId: text("notification_id").notNull(),
    at: timestamp("at", { withTimezone: true, mode: "date" }).notNull(),
    durationMs: integer("duration_ms").notNull(),
    statusCode: integer("status_code"),
    error: text("error"),
    responseBody: text("response_body"),
    destination: text("destination"),
  },
  (t) => [index("deleted_delivery_attempts_notification_idx").on(t.notificationId, t.at)],
);
