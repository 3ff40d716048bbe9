// Notifications and their delivery attempts. The delivery path is two round trips per
// attempt (load, record); recording is one statement, so the attempt, the notification's
// new state and the alert's health never disagree.
import type { AlertStatus, NotificationMethod, NotificationPayload, NotificationStatus } from "../../domain/types.ts";
import type { Sql } from "../client.ts";

/**
 * drizzle's postgres-js driver makes the shared client hand timestamps back as text
 * ("2026-03-01 12:00:00.123+00"); the rows here promise Dates.
 */
function asDate<T extends Date | string | null>(value: T): T extends null ? null : Date;
function asDate(value: Date | string | null): Date | null {
  if (value === null || value instanceof Date) return value;
  return new Date(value);
}

export type DeliveryRow = {
  notificationId: string;
  alertId: string;
  channel: NotificationMethod;
  destination: string;
  payload: NotificationPayload;
  status: NotificationStatus;
  attemptCount: number;
  nextAttemptAt: Date | null;
  alertStatus: AlertStatus;
  alertOwner: string;
  alertMethod: NotificationMethod;
  alertRecipient: string | null;
  webhookSecret: string | null;
  previousWebhookSecret: string | null;
  previousSecretExpiresAt: Date | null;
};

export async function loadForDelivery(sql: Sql, notificationId: string): Promise<DeliveryRow | undefined> {
  const [row] = await sql<DeliveryRow[]>`
    select n.id as "notificationId", n.alert_id as "alertId", n.channel, n.destination, n.payload, n.status,
           n.attempt_count as "attemptCount", n.next_attempt_at as "nextAttemptAt",
           a.status as "alertStatus", a.owner as "alertOwner", a.notification_method as "alertMethod",
           a.recipient as "alertRecipient", a.webhook_secret as "webhookSecret",
           a.previous_webhook_secret as "previousWebhookSecret", a.previous_secret_expires_at as "previousSecretExpiresAt"
    from notifications n join alerts a on a.id = n.alert_id
    where n.id = ${notificationId}`;
  if (!row) return undefined;
  // A payload written as a JSON string rather than a jsonb object still renders.
  if (typeof row.payload === "string") row.payload = JSON.parse(row.payload) as NotificationPayload;
  row.nextAttemptAt = asDate(row.nextAttemptAt);
  row.previousSecretExpiresAt = asDate(row.previousSecretExpiresAt);
  return row;
}

export type AttemptRecord = {
  notificationId: string;
  alertId: string;
  at: Date;
  durationMs: number;
  statusCode: number | null;
  error: string | null;
  responseBody: string | null;
  /** The notification's state after this attempt. */
  status: Exclude<NotificationStatus, "pending">;
  nextAttemptAt: Date | null;
};

/**
 * Records one attempt and moves the notification on, if it is still open (a concurrent
 * run that already finished it wins). A delivery also ends the alert's run of failures.
 * Returns false when the notification was no longer open.
 */
export async function recordAttempt(sql: Sql, attempt: AttemptRecord): Promise<boolean> {
  const at = attempt.at.toISOString();
  const delivered = attempt.status === "delivered";
  const clearFailing = delivered
    ? sql`, healthy as (
        update alerts set failing_since = null, updated_at = ${at}::timestamptz
        where id = ${attempt.alertId} and failing_since is not null)`
    : sql``;
  const rows = await sql<{ id: string }[]>`
    with attempt as (
      insert into delivery_attempts (notification_id, at, duration_ms, status_code, error, response_body)
      values (${attempt.notificationId}, ${at}::timestamptz, ${attempt.durationMs}::int, ${attempt.statusCode}::int,
              ${attempt.error}::text, ${attempt.responseBody}::text)
    )${clearFailing}
    update notifications
    set status = ${attempt.status}, attempt_count = attempt_count + 1,
        next_attempt_at = ${attempt.nextAttemptAt?.toISOString() ?? null}::timestamptz,
        delivered_at = ${delivered ? at : null}::timestamptz, updated_at = ${at}::timestamptz
    where id = ${attempt.notificationId} and status in ('pending', 'retrying')
    returning id`;
  return rows.length > 0;
}

/** Closes a notification without an attempt (its alert was disabled before it went out). */
export async function failWithoutAttempt(sql: Sql, notificationId: string, now: Date): Promise<void> {
  await sql`
    update notifications set status = 'failed', next_attempt_at = null, updated_at = ${now.toISOString()}::timestamptz
    where id = ${notificationId} and status in ('pending', 'retrying')`;
}

export type NewNotification = {
  id: string;
  alertId: string;
  eventId: string | null;
  channel: NotificationMethod;
  destination: string;
  payload: NotificationPayload;
  createdAt: Date;
};

export async function insertNotification(sql: Sql, notification: NewNotification): Promise<void> {
  const at = notification.createdAt.toISOString();
  await sql`
    insert into notifications (id, alert_id, event_id, channel, destination, payload, status, created_at, updated_at)
    values (${notification.id}, ${notification.alertId}, ${notification.eventId}::text, ${notification.channel},
            ${notification.destination}, ${JSON.stringify(notification.payload)}::jsonb, 'pending',
            ${at}::timestamptz, ${at}::timestamptz)`;
}

export type NotificationView = {
  notificationId: string;
  alertId: string;
  eventId: string | null;
  channel: NotificationMethod;
  status: NotificationStatus;
  createdAt: Date;
  deliveredAt: Date | null;
  attempts: Array<{ at: Date; durationMs: number; statusCode: number | null; error: string | null }>;
};

/** A notification with its attempts, oldest first; undefined when it is not the owner's. */
export async function findNotification(sql: Sql, owner: string, notificationId: string): Promise<NotificationView | undefined> {
  const [row] = await sql<Omit<NotificationView, "attempts">[]>`
    select n.id as "notificationId", n.alert_id as "alertId", n.event_id as "eventId", n.channel, n.status,
           n.created_at as "createdAt", n.delivered_at as "deliveredAt"
    from notifications n join alerts a on a.id = n.alert_id
    where n.id = ${notificationId} and a.owner = ${owner}`;
  if (!row) return undefined;
  const attempts = await sql<NotificationView["attempts"]>`
    select at, duration_ms as "durationMs", status_code as "statusCode", error
    from delivery_attempts where notification_id = ${notificationId}
    order by at, id`;
  return {
    ...row,
    createdAt: asDate(row.createdAt),
    deliveredAt: asDate(row.deliveredAt),
    attempts: attempts.map((attempt) => ({ ...attempt, at: asDate(attempt.at) })),
  };
}

export type TestTarget = {
  alertId: string;
  walletId: string;
  address: string;
  alias: string | null;
  condition: NotificationPayload["data"]["condition"];
  threshold: number;
  notificationMethod: NotificationMethod;
  webhookUrl: string | null;
  recipient: string | null;
  webhookSecret: string | null;
  riskScore: number;
  riskFactors: string[];
};

/** What a test notification is rendered from: the owner's alert, its wallet and the address's risk. */
export async function findTestTarget(sql: Sql, owner: string, alertId: string): Promise<TestTarget | undefined> {
  const [row] = await sql<TestTarget[]>`
    select a.id as "alertId", a.wallet_id as "walletId", w.address, w.alias, a.condition,
           a.threshold::float8 as threshold, a.notification_method as "notificationMethod",
           a.webhook_url as "webhookUrl", a.recipient, a.webhook_secret as "webhookSecret",
           coalesce(s.risk_score, 0)::int as "riskScore", coalesce(s.risk_factors, '{}') as "riskFactors"
    from alerts a
    join tracked_wallets w on w.id = a.wallet_id
    left join address_state s on s.address = w.address
    where a.id = ${alertId} and a.owner = ${owner}`;
  return row;
}

/**
 * Makes `secret` the alert's webhook secret and keeps the current one signing until
 * `previousExpiresAt`. Undefined when the alert is not the owner's.
 */
export async function rotateWebhookSecret(
  sql: Sql,
  owner: string,
  alertId: string,
  secret: string,
  previousExpiresAt: Date,
  now: Date,
): Promise<{ rotated: boolean } | undefined> {
  const [row] = await sql<{ rotated: boolean }[]>`
    with target as (
      select id, notification_method = 'webhook' and webhook_secret is not null as webhook
      from alerts where id = ${alertId} and owner = ${owner} for update
    ), rotated as (
      update alerts a
      set previous_webhook_secret = a.webhook_secret, previous_secret_expires_at = ${previousExpiresAt.toISOString()}::timestamptz,
          webhook_secret = ${secret}, updated_at = ${now.toISOString()}::timestamptz
      from target where a.id = target.id and target.webhook
      returning a.id
    )
    select exists (select 1 from rotated) as rotated from target`;
  return row;
}
