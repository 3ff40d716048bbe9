// Redelivery: a failed notification reopened by its owner (POST /v1/notifications/{id}/redeliver,
// or an alert's failed ones in a window). Reopened, it is the same row, pending again with a
// fresh retry schedule (attempt_count 0): its earlier attempts stay in delivery_attempts, its id
// stays its webhook-id, and the delivery job and the reconciler treat it like any other pending
// notification. Each statement here runs in the caller's transaction, after the alert is locked.
import type { TransactionSql } from "postgres";
import type { AlertStatus, NotificationMethod, NotificationPayload, NotificationStatus } from "../../domain/types.ts";

/** channel: the alert's notification method, which its notifications share (it cannot change). */
export type RedeliveryAlert = { alertId: string; alertStatus: AlertStatus; channel: NotificationMethod };
/**
 * type: the payload's, which says what the notification is; its event does not (a test and a
 * cooldown digest both have none). A test (`risk_alert.test`) is sent even while its alert is
 * disabled (queue/jobs/deliver.ts).
 */
export type RedeliveryTarget = RedeliveryAlert & {
  notificationId: string;
  status: NotificationStatus;
  type: NotificationPayload["type"];
};
export type Reopened = { notificationId: string; channel: NotificationMethod };

/**
 * The owner's notification with its alert's status; undefined when it is not the owner's (or
 * its alert is deleted). The alert is locked `for key share`, as a test notification locks it:
 * a delete waits until the reopen commits (and then archives it as reopened), and every writer
 * locks an alert before its notifications (alert-archive.ts).
 */
export async function findRedeliveryTarget(sql: TransactionSql, owner: string, notificationId: string): Promise<RedeliveryTarget | undefined> {
  const [row] = await sql<RedeliveryTarget[]>`
    select n.id as "notificationId", n.status, n.channel, n.payload->>'type' as type, a.id as "alertId", a.status as "alertStatus"
    from notifications n join alerts a on a.id = n.alert_id
    where n.id = ${notificationId} and a.owner = ${owner}
    for key share of a`;
  return row;
}

/** The owner's alert with its status, locked as above; undefined when it is not the owner's. */
export async function findRedeliveryAlert(sql: TransactionSql, owner: string, alertId: string): Promise<RedeliveryAlert | undefined> {
  const [row] = await sql<RedeliveryAlert[]>`
    select id as "alertId", status as "alertStatus", notification_method as channel from alerts
    where id = ${alertId} and owner = ${owner}
    for key share`;
  return row;
}

/**
 * The alert's failed notifications made in [since, until), oldest first, at most `limit`: those of
 * its firings and its cooldown digests (what a cooldown held back, which an outage's redelivery
 * owes its owner as much). Not its tests (judged by the payload's type: a digest has no event
 * either): pings its owner sent while setting up the receiver, which an outage's redelivery would
 * send again with an old risk score; a test is resent only when asked for by id.
 */
export async function failedInWindow(sql: TransactionSql, alertId: string, since: Date, until: Date, limit: number): Promise<string[]> {
  const rows = await sql<{ id: string }[]>`
    select id from notifications
    where alert_id = ${alertId} and status = 'failed' and payload->>'type' <> 'risk_alert.test'
      and created_at >= ${since.toISOString()}::timestamptz and created_at < ${until.toISOString()}::timestamptz
    order by id limit ${limit}`;
  return rows.map((row) => row.id);
}

/**
 * Starts the alert's count of failures afresh (alerts.failing_since, notify/alert-health.ts), as
 * a PATCH of its status does: its owner has acted on the failures, and the notifications it
 * reopens are judged again when they are sent. Kept, the run could be dated by the very failure
 * being redelivered, and that notification's second failure then counted twice toward the 24 h
 * that disable the alert. Called before reopenFailed: an alert is locked before its
 * notifications, by every writer.
 */
export async function restartFailureRun(sql: TransactionSql, alertId: string, now: Date): Promise<void> {
  await sql`
    update alerts set failing_since = null, updated_at = ${now.toISOString()}::timestamptz
    where id = ${alertId} and failing_since is not null`;
}

/**
 * Reopens those of the notifications that are still failed; returns the ones it reopened, oldest
 * first. The `status = 'failed'` condition is the guard against concurrent redeliveries: a second
 * request waits for the first one's row lock, then finds the row pending and leaves it, so each
 * notification is reopened (and sent) once. next_attempt_at null: due at once.
 */
export async function reopenFailed(sql: TransactionSql, notificationIds: readonly string[], now: Date): Promise<Reopened[]> {
  if (notificationIds.length === 0) return [];
  // Oldest first (ids are time-ordered): an update returns its rows in no promised order.
  return sql<Reopened[]>`
    with reopened as (
      update notifications
      set status = 'pending', attempt_count = 0, next_attempt_at = null, updated_at = ${now.toISOString()}::timestamptz
      where id = any(${notificationIds as string[]}::text[]) and status = 'failed'
      returning id, channel
    )
    select id as "notificationId", channel from reopened order by id`;
}
