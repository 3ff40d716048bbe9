// A caller's risk alerts. Every query is scoped by owner, so another caller's alert is
// simply not found. Rows arrive JSON-ready: numbers cast to float8, date-times formatted
// as ISO 8601 UTC in SQL (drizzle turns postgres.js's date parsing off for the shared pool,
// so Date values neither come back nor go in as parameters).
import type { TransactionSql } from "postgres";
import { changedSettings, createdChanges, patchAction } from "../../domain/alert-history.ts";
import type { AlertStatus, Condition, NotificationMethod } from "../../domain/types.ts";
import type { Sql } from "../client.ts";
import { archiveAlerts } from "./alert-archive.ts";
import { recordAlertChange } from "./alert-changes.ts";
import { ownerLock } from "./advisory-lock.ts";
import type { Changed, Deleted, Precondition } from "./guarded-write.ts";

export type AlertRow = {
  alertId: string;
  walletId: string;
  condition: Condition;
  status: AlertStatus;
  /** ISO 8601 UTC with Z. */
  createdAt: string;
  threshold: number;
  notificationMethod: NotificationMethod;
  webhookUrl: string | null;
  recipient: string | null;
  cooldownSeconds: number;
  token: string | null;
  /** large_transfer with a token: the trailing window its sends are summed over (seconds); null: each transaction alone. */
  windowSeconds: number | null;
  /** large_transfer: transfers to and from the owner's other tracked wallets are not judged (domain/conditions/own-wallets.ts). */
  ignoreOwnWallets: boolean;
  disabledReason: string | null;
};

const COLUMNS = `id as "alertId", wallet_id as "walletId", condition, status,
  to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as "createdAt",
  threshold::float8 as threshold, notification_method as "notificationMethod", webhook_url as "webhookUrl",
  recipient, cooldown_seconds as "cooldownSeconds", token, window_seconds as "windowSeconds",
  ignore_own_wallets as "ignoreOwnWallets", disabled_reason as "disabledReason"`;

export type NewAlert = {
  id: string;
  owner: string;
  walletId: string;
  condition: Condition;
  threshold: number;
  token: string | null;
  windowSeconds: number | null;
  ignoreOwnWallets: boolean;
  notificationMethod: NotificationMethod;
  webhookUrl: string | null;
  recipient: string | null;
  cooldownSeconds: number;
  webhookSecret: string | null;
  /** The token's usable email claim (owner_email; never returned by these queries). */
  ownerEmail: string | null;
  /** The request's Idempotency-Key and its body's fingerprint, when it had one. */
  idempotency?: { key: string; fingerprint: string } | undefined;
  createdAt: Date;
};

/** The most alerts one owner may have on one wallet, and in all (MAX_ALERTS_PER_WALLET, MAX_ALERTS_PER_CALLER). */
export type AlertCaps = { perWallet: number; perCaller: number };

export type InsertedAlert =
  | { kind: "created"; row: AlertRow }
  /** The wallet is not the owner's, or the owner has an alert under the same idempotency key already. */
  | { kind: "not-inserted" }
  /** The owner has `limit` alerts on the wallet, or in all, already: nothing was written. */
  | { kind: "capped"; cap: "wallet" | "caller"; limit: number };

/** One owner's alert creates run one at a time (advisory-lock.ts). */
const lockAlertCreates = ownerLock(0x616c7274); // "alrt"

/**
 * Inserts the alert if the owner has fewer than the caps' alerts on the wallet and in all,
 * counting every status (a paused or disabled alert can be made active again). The count and
 * the insert share a transaction under the owner's advisory lock, so that two creates cannot
 * both take the last slot; deletes take no lock: one racing a create only makes the count
 * too high for a moment, never too low. A key already used is found under the lock too (a
 * create racing under it has committed by then): such a request is a replay, never capped.
 */
export async function insertAlert(sql: Sql, alert: NewAlert, caps: AlertCaps): Promise<InsertedAlert> {
  return sql.begin(async (tx) => {
    await lockAlertCreates(tx, alert.owner);
    // Counted up to the cap only: an owner with many alerts costs no more than the cap's rows.
    const [state] = await tx<{ walletFound: boolean; keyUsed: boolean; onWallet: number; inAll: number }[]>`
      select exists (select 1 from tracked_wallets where id = ${alert.walletId} and owner = ${alert.owner}) as "walletFound",
             exists (select 1 from alerts where owner = ${alert.owner} and idempotency_key = ${alert.idempotency?.key ?? null}::text) as "keyUsed",
             (select count(*) from (select 1 from alerts where owner = ${alert.owner} and wallet_id = ${alert.walletId}
                                    limit ${caps.perWallet}) as capped)::int as "onWallet",
             (select count(*) from (select 1 from alerts where owner = ${alert.owner} limit ${caps.perCaller}) as capped)::int as "inAll"`;
    if (state!.keyUsed) return { kind: "not-inserted" };
    // An unknown wallet is a 404 whatever the caps say: insertAlertRow finds none (locked, as there).
    if (state!.walletFound) {
      if (state!.onWallet >= caps.perWallet) return { kind: "capped", cap: "wallet", limit: caps.perWallet };
      if (state!.inAll >= caps.perCaller) return { kind: "capped", cap: "caller", limit: caps.perCaller };
    }
    const row = await insertAlertRow(tx, alert);
    if (!row) return { kind: "not-inserted" };
    // Its history begins with it: every setting it was made with, by its owner.
    await recordAlertChange(tx, { alertId: row.alertId, owner: alert.owner, at: alert.createdAt, by: alert.owner, action: "created", changes: createdChanges(row) });
    return { kind: "created", row };
  });
}

/**
 * Inserts the alert if the wallet is the owner's, in one statement so a wallet deleted
 * meanwhile cannot leave an orphan; undefined when the wallet is not found, or when the
 * owner has an alert under the same idempotency key already (findAlertByIdempotencyKey;
 * a concurrent insert under that key is waited for by the unique index). A
 * risk_score_increase alert starts from the address's current score (0 before any), read
 * under a share lock: an evaluation writing a new score holds the row until it commits, so
 * the alert starts from the new score, or (created first) is found by that evaluation
 * (loadScoreAlerts) and judges the rise from the score it started from. With the score it
 * keeps the address's newest score change (baseline_change_id): the changes up to it are in
 * that score already and never the alert's, though their evaluation may still be owed.
 * An unusual_activity alert starts armed (activity_armed): its first judgment fires on a
 * burst already in progress.
 */
async function insertAlertRow(sql: TransactionSql, alert: NewAlert): Promise<AlertRow | undefined> {
  // The lock first, in a statement of its own: a statement that waits for a row lock reads that
  // row as the writer committed it, but everything else as it was when the statement began, so
  // the newest score change would be read from before the score it goes with.
  if (alert.condition === "risk_score_increase") await lockScoreOfWallet(sql, alert);
  const [row] = await sql<AlertRow[]>`
    with wallet as (
      -- Locked: a delete of the wallet still uncommitted is waited for, and its wallet then not
      -- found (a 404), where the foreign key's own check failed the insert (a 500).
      select id, address from tracked_wallets where id = ${alert.walletId} and owner = ${alert.owner}
      for key share
    ), score as (
      select risk_score from address_state
      where ${alert.condition} = 'risk_score_increase' and address = (select address from wallet)
      for share
    )
    insert into alerts (id, owner, wallet_id, condition, threshold, token, window_seconds, ignore_own_wallets, notification_method, webhook_url,
                        recipient, cooldown_seconds, status, webhook_secret, owner_email, baseline_score,
                        baseline_change_id, activity_armed, idempotency_key, idempotency_fingerprint, created_at, updated_at)
    select ${alert.id}, ${alert.owner}, wallet.id, ${alert.condition}, ${String(alert.threshold)}::numeric, ${alert.token}::text, ${alert.windowSeconds}::int, ${alert.ignoreOwnWallets}::boolean,
           ${alert.notificationMethod}, ${alert.webhookUrl}::text, ${alert.recipient}::text, ${alert.cooldownSeconds}::int,
           'active', ${alert.webhookSecret}::text, ${alert.ownerEmail}::text,
           case when ${alert.condition} = 'risk_score_increase' then coalesce((select risk_score from score), 0) end,
           case when ${alert.condition} = 'risk_score_increase' then ${sql.unsafe(NEWEST_SCORE_CHANGE_OF("wallet.address"))} else 0 end,
           ${alert.condition === "unusual_activity"}::boolean,
           ${alert.idempotency?.key ?? null}::text, ${alert.idempotency?.fingerprint ?? null}::text,
           ${alert.createdAt.toISOString()}::timestamptz, ${alert.createdAt.toISOString()}::timestamptz
    from wallet
    on conflict (owner, idempotency_key) where idempotency_key is not null do nothing
    returning ${sql.unsafe(COLUMNS)}`;
  return row;
}

/**
 * The newest risk_score_history id of the address (0 before any): ids are drawn while the
 * address's score is locked, so for one address they are in the order the changes were made.
 * created_at is not: it is the writing transaction's start, and a transaction that began first
 * may write last (test/integration/alert-baseline-change.test.ts), so an index on (address,
 * created_at) cannot find it. risk_score_history_address_id_idx (address, id) answers it from
 * its last entry for the address: 3–4 pages, where the primary key walked back through every
 * later change, the whole table for an address that never changed (0.5 s at 1,100,000).
 */
const NEWEST_SCORE_CHANGE_OF = (address: string) =>
  `coalesce((select max(h.id) from risk_score_history h where h.address = ${address}), 0)`;

/** The share lock on the wallet's score that insertAlertRow takes, in the same order (the wallet, then its score). */
async function lockScoreOfWallet(sql: TransactionSql, alert: NewAlert): Promise<void> {
  await sql`
    with wallet as (
      select address from tracked_wallets where id = ${alert.walletId} and owner = ${alert.owner}
      for key share
    )
    select 1 from address_state where address = (select address from wallet) for share`;
}

export type IdempotentAlert = {
  row: AlertRow;
  fingerprint: string;
  /** The current secret: the one the create answered with unless `secretRotated`. */
  webhookSecret: string | null;
  /** Seconds since the alert was created. */
  ageSeconds: number;
  /** The secret was rotated since the create (secret_rotated_at): its answer is not the alert's any more. */
  secretRotated: boolean;
};

/**
 * The owner's alert created under `key`, with what a replay of its creation needs. One
 * statement, so the secret and whether it was rotated are read together (a rotation is one
 * statement too: rotateWebhookSecret).
 */
export async function findAlertByIdempotencyKey(sql: Sql, owner: string, key: string): Promise<IdempotentAlert | undefined> {
  const [found] = await sql<(AlertRow & Omit<IdempotentAlert, "row">)[]>`
    select ${sql.unsafe(COLUMNS)}, idempotency_fingerprint as fingerprint, webhook_secret as "webhookSecret",
           extract(epoch from now() - created_at)::float8 as "ageSeconds",
           secret_rotated_at is not null as "secretRotated"
    from alerts where owner = ${owner} and idempotency_key = ${key}`;
  if (!found) return undefined;
  const { fingerprint, webhookSecret, ageSeconds, secretRotated, ...row } = found;
  return { row, fingerprint, webhookSecret, ageSeconds, secretRotated };
}

export async function findAlert(sql: Sql, owner: string, alertId: string): Promise<AlertRow | undefined> {
  const [row] = await sql<AlertRow[]>`
    select ${sql.unsafe(COLUMNS)} from alerts where id = ${alertId} and owner = ${owner}`;
  return row;
}

export type AlertFilter = { walletId?: string | undefined; status?: AlertStatus | undefined };

/**
 * Newest first, by id: ids are time-ordered, made from the clock reading stored as created_at
 * (ids.ts), so this is creation order, and ties within a millisecond fall to the id. Collated "C"
 * (byte order) so that a cursor compares as the list sorts. `after`: only the alerts listed
 * after that id (older), whether or not it still names an alert: a cursor that a delete between
 * two pages does not move, as an offset does. The total (of the filter, the cursor aside) rides
 * along on every row (a window count, taken before the cursor); one row more than the page
 * says whether the list goes on.
 */
export async function listAlerts(
  sql: Sql,
  owner: string,
  filter: AlertFilter,
  page: { offset: number; limit: number; after?: string | undefined },
): Promise<{ rows: AlertRow[]; total: number; hasMore: boolean }> {
  const walletId = filter.walletId ?? null;
  const status = filter.status ?? null;
  const where = sql`owner = ${owner}
    and (${walletId}::text is null or wallet_id = ${walletId}::text)
    and (${status}::text is null or status = ${status}::text)`;
  const cursor = page.after === undefined ? sql`` : sql`where "alertId" collate "C" < ${page.after}::text collate "C"`;
  const rows = await sql<(AlertRow & { total: number })[]>`
    select * from (select ${sql.unsafe(COLUMNS)}, count(*) over ()::int as total from alerts where ${where}) listed
    ${cursor}
    order by "alertId" collate "C" desc
    limit ${page.limit + 1} offset ${page.offset}`;
  const hasMore = rows.length > page.limit;
  if (rows.length > 0) {
    const total = rows[0]!.total;
    return { rows: rows.slice(0, page.limit).map(({ total: _total, ...row }) => row), total, hasMore };
  }
  // A page past the end carries no row to read the total from.
  const [count] = await sql<{ total: number }[]>`select count(*)::int as total from alerts where ${where}`;
  return { rows: [], total: count?.total ?? 0, hasMore };
}

export type AlertChanges = {
  status?: "active" | "paused";
  threshold?: number;
  cooldownSeconds?: number;
  recipient?: string;
  webhookUrl?: string;
  /** The PATCHing caller is the owner: their token's usable email claim replaces the stored one. */
  ownerEmail?: string;
};

/**
 * A risk_score_increase alert resumed (from paused or disabled) measures from the lower of its
 * baseline and the score now: the evaluation lowers an active alert's baseline on each fall,
 * and a fall while the alert was not active would otherwise leave it high, so that a wallet
 * cleared during a pause and exposed again after it would never be paged. A rise during the
 * pause keeps the old, lower baseline: the next rise fires with the whole of it.
 *
 * The score is read `for share`, first, as an alert's creation reads it: an evaluation writing
 * a fall is waited for (it locks the score, then reads which alerts are active, then locks
 * those: the same order, so neither waits for the other in a circle). Read without the lock,
 * a fall still uncommitted was missed by both sides: the evaluation had found the alert
 * paused, and the resume read the score before the fall.
 *
 * The resumed alert also keeps the address's newest score change (baseline_change_id, read by
 * the update after this lock, as a create does): a change made while it was paused is not its
 * own, though its evaluation may still be owed (a paused alert watches no change).
 */
async function scoreOfResumedAlert(tx: TransactionSql, owner: string, alertId: string): Promise<number | null> {
  const [row] = await tx<{ score: number }[]>`
    select s.risk_score as score
    from alerts a join tracked_wallets w on w.id = a.wallet_id join address_state s on s.address = w.address
    where a.id = ${alertId} and a.owner = ${owner} and a.status <> 'active' and a.baseline_score is not null
    for share of s`;
  return row?.score ?? null;
}

/**
 * Applies the changes; undefined when the alert is not the owner's. Setting a status is
 * the owner's answer to a disabled alert, so it also clears the failure record, disabled_at
 * with it: a notice of that disabling still waiting for its retry is then dropped, also if
 * the alert is disabled again before it runs (queue/jobs/disabled-notice.ts), and is no
 * longer owed (the reconciler does not queue it again). An unusual_activity alert resumed or
 * given another threshold is armed again (activity_armed): its next judgment fires on a burst
 * already at or over its limit, unless it reported that burst already (record-events.ts).
 * A change of any setting the API shows is entered in the alert's history, as `paused`,
 * `resumed` or `updated` (domain/alert-history.ts); one that changed none leaves no entry.
 */
export async function updateAlert(
  sql: Sql,
  owner: string,
  alertId: string,
  changes: AlertChanges,
  now: Date,
  precondition?: Precondition<AlertRow>,
): Promise<Changed<AlertRow>> {
  const columns: Record<string, string | number | boolean | null> = { updated_at: now.toISOString() };
  if (changes.status !== undefined) {
    columns.status = changes.status;
    columns.failing_since = null;
    columns.disabled_reason = null;
    columns.disabled_at = null;
    columns.disabled_notice_owed = false;
  }
  if (changes.threshold !== undefined) columns.threshold = String(changes.threshold);
  if (changes.cooldownSeconds !== undefined) columns.cooldown_seconds = changes.cooldownSeconds;
  if (changes.recipient !== undefined) columns.recipient = changes.recipient;
  if (changes.webhookUrl !== undefined) columns.webhook_url = changes.webhookUrl;
  if (changes.ownerEmail !== undefined) columns.owner_email = changes.ownerEmail;
  const resumes = changes.status === "active";
  const update = async (db: Sql | TransactionSql, score: number | null) => {
    // LEAST skips a NULL; the status and threshold read in SET are the row's before this update.
    const baseline = score === null ? db`` : db`, baseline_score = case when status = 'active' then baseline_score else least(baseline_score, ${score}::smallint) end`;
    const changeMark = resumes
      ? db`, baseline_change_id = case when status = 'active' or condition <> 'risk_score_increase' then baseline_change_id
             else ${db.unsafe(NEWEST_SCORE_CHANGE_OF("(select w.address from tracked_wallets w where w.id = alerts.wallet_id)"))} end`
      : db``;
    const resumed = resumes ? db`status <> 'active'` : db`false`;
    const newThreshold = changes.threshold === undefined ? db`false` : db`threshold is distinct from ${String(changes.threshold)}::numeric`;
    const arming =
      resumes || changes.threshold !== undefined
        ? db`, activity_armed = activity_armed or (condition = 'unusual_activity' and (${resumed} or ${newThreshold}))`
        : db``;
    const [row] = await db<AlertRow[]>`
      update alerts set ${db(columns)}${baseline}${changeMark}${arming}
      where id = ${alertId} and owner = ${owner}
      returning ${db.unsafe(COLUMNS)}`;
    return row;
  };
  // One transaction: the alert as it was is read under the lock the update takes, so that the
  // history entry (alert-changes.ts) says what this change changed, from what, and no other
  // write comes between; a precondition is judged on that read.
  return sql.begin(async (tx) => {
    // A resume reads the score first, as an evaluation locks them: the score, then the alert.
    const score = resumes ? await scoreOfResumedAlert(tx, owner, alertId) : null;
    const [current] = await tx<AlertRow[]>`
      select ${tx.unsafe(COLUMNS)} from alerts where id = ${alertId} and owner = ${owner} for no key update`;
    if (!current) return { kind: "not-found" };
    if (precondition && !precondition(current)) return { kind: "precondition-failed" };
    const row = await update(tx, score);
    if (!row) return { kind: "not-found" };
    const settings = changedSettings(current, row);
    const action = patchAction(settings);
    // The caller that changes an alert is its owner (every query here is scoped by owner).
    if (action) await recordAlertChange(tx, { alertId, owner, at: now, by: owner, action, changes: settings });
    return { kind: "changed", row };
  });
}

/**
 * Deletes the owner's alert. Its events, notifications and delivery attempts go with it
 * (cascade), copied first into the archive by the same transaction (alert-archive.ts), with
 * `deletedBy` (the caller's token sub); an unknown or foreign alert archives nothing. Locks the
 * alert, then its notifications: the lock order every writer keeps (alert-archive.ts).
 * `precondition` (an If-Match) is judged on the alert as it is under that lock.
 */
export async function deleteAlert(sql: Sql, owner: string, alertId: string, deletedBy: string, precondition?: Precondition<AlertRow>): Promise<Deleted> {
  return sql.begin(async (tx) => {
    if (precondition) {
      const [current] = await tx<AlertRow[]>`
        select ${tx.unsafe(COLUMNS)} from alerts where id = ${alertId} and owner = ${owner} for update`;
      if (!current) return { kind: "not-found" };
      if (!precondition(current)) return { kind: "precondition-failed" };
    }
    const archived = await archiveAlerts(tx, { owner, alertId }, { deletedBy, reason: "alert deleted" });
    if (archived.length === 0) return { kind: "not-found" };
    await tx`delete from alerts where id = ${alertId} and owner = ${owner}`;
    return { kind: "deleted" };
  });
}
