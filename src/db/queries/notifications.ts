// Notifications as the API sees them: created for a test, read with their attempts, and the
// webhook secret rotation. The delivery hot path is in deliveries.ts.
import type { NotificationMethod, NotificationPayload, NotificationStatus } from "../../domain/types.ts";
import type { TransactionSql } from "postgres";
import type { Sql } from "../client.ts";

/**
 * drizzle's postgres-js driver makes the shared client hand timestamps back as text
 * ("2026-03-01 12:00:00.123+00"); the rows here promise Dates.
 */
export function asDate<T extends Date | string | null>(value: T): T extends null ? null : Date;
export function asDate(value: Date | string | null): Date | null {
  if (value === null || value instanceof Date) return value;
  return new Date(value);
}

/**
 * Closes a notification without an attempt (its alert was disabled before it went out). "Not
 * finished" is spelled so that it does not match notifications_open_idx's predicate: planned
 * with the open ones counted few, Postgres read every open notification through that index to
 * find this one, and an alert disabled in a burst closes thousands this way, one by one.
 */
export async function failWithoutAttempt(sql: Sql, notificationId: string, now: Date): Promise<void> {
  await sql`
    update notifications set status = 'failed', next_attempt_at = null, updated_at = ${now.toISOString()}::timestamptz
    where id = ${notificationId} and status not in ('delivered', 'failed')`;
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

export async function insertNotification(sql: Sql | TransactionSql, notification: NewNotification): Promise<void> {
  const at = notification.createdAt.toISOString();
  await sql`
    insert into notifications (id, alert_id, event_id, channel, destination, payload, status, created_at, updated_at)
    values (${notification.id}, ${notification.alertId}, ${notification.eventId}::text, ${notification.channel},
            ${notification.destination}, ${JSON.stringify(notification.payload)}::jsonb, 'pending',
            ${at}::timestamptz, ${at}::timestamptz)`;
}

/**
 * A notification as the API shows it, without its attempts: GET /v1/notifications/{id} adds
 * them, the list of an alert's notifications (notification-list.ts) shows this.
 */
export type NotificationSummary = {
  notificationId: string;
  alertId: string;
  eventId: string | null;
  /** The payload's type: a test and a cooldown digest have no event, and this tells them apart. */
  type: NotificationPayload["type"];
  channel: NotificationMethod;
  status: NotificationStatus;
  createdAt: Date;
  deliveredAt: Date | null;
  /** Every attempt on record, a redelivery's too (attempt_count restarts at a redelivery). */
  attemptCount: number;
  /** A retry's time, or a cooldown digest's cooldown end; null when due at once, or finished. */
  nextAttemptAt: Date | null;
  /** What the carrier did with an SMS, from Twilio's status callbacks; null until one came (and for other channels). */
  carrier: { status: string; errorCode: number | null; updatedAt: Date } | null;
};

export type NotificationView = NotificationSummary & {
  /** `destination`: where the attempt went, as stored (null for attempts made before migration 0028). */
  attempts: Array<{ at: Date; durationMs: number; statusCode: number | null; error: string | null; destination: string | null }>;
};

export type SummaryRow = Omit<NotificationSummary, "carrier"> & {
  carrierStatus: string | null;
  carrierErrorCode: number | null;
  carrierUpdatedAt: Date | null;
};

/** The columns of a NotificationSummary (as SummaryRow), of `notifications n`. */
export const summaryColumns = (sql: Sql) => sql`
  n.id as "notificationId", n.alert_id as "alertId", n.event_id as "eventId", n.payload->>'type' as type,
  n.channel, n.status, n.created_at as "createdAt", n.delivered_at as "deliveredAt", n.next_attempt_at as "nextAttemptAt",
  (select count(*) from delivery_attempts d where d.notification_id = n.id)::int as "attemptCount",
  n.carrier_status as "carrierStatus", n.carrier_error_code as "carrierErrorCode", n.carrier_updated_at as "carrierUpdatedAt"`;

export function summaryOf(row: SummaryRow): NotificationSummary {
  const { carrierStatus, carrierErrorCode, carrierUpdatedAt, ...summary } = row;
  return {
    ...summary,
    createdAt: asDate(row.createdAt),
    deliveredAt: asDate(row.deliveredAt),
    nextAttemptAt: asDate(row.nextAttemptAt),
    carrier:
      carrierStatus !== null && carrierUpdatedAt !== null
        ? { status: carrierStatus, errorCode: carrierErrorCode, updatedAt: asDate(carrierUpdatedAt) }
        : null,
  };
}

/** A notification with its attempts, oldest first; undefined when it is not the owner's. */
export async function findNotification(sql: Sql, owner: string, notificationId: string): Promise<NotificationView | undefined> {
  const [row] = await sql<SummaryRow[]>`
    select ${summaryColumns(sql)}
    from notifications n join alerts a on a.id = n.alert_id
    where n.id = ${notificationId} and a.owner = ${owner}`;
  if (!row) return undefined;
  const attempts = await sql<NotificationView["attempts"]>`
    select at, duration_ms as "durationMs", status_code as "statusCode", error, destination
    from delivery_attempts where notification_id = ${notificationId}
    order by at, id`;
  return { ...summaryOf(row), attempts: attempts.map((attempt) => ({ ...attempt, at: asDate(attempt.at) })) };
}

export type TestTarget = {
  alertId: string;
  walletId: string;
  address: string;
  alias: string | null;
  condition: NotificationPayload["data"]["condition"];
  threshold: number;
  /** large_transfer: the token filter, as its owner gave it; null: any token. */
  token: string | null;
  notificationMethod: NotificationMethod;
  webhookUrl: string | null;
  recipient: string | null;
  webhookSecret: string | null;
  riskScore: number;
  riskFactors: string[];
};

/**
 * What a test notification is rendered from: the owner's alert, its wallet and the address's
 * risk. The alert row is locked (in the caller's transaction) so that a delete of it waits
 * until the test notification is written, rather than failing its insert.
 */
export async function findTestTarget(sql: Sql | TransactionSql, owner: string, alertId: string): Promise<TestTarget | undefined> {
  const [row] = await sql<TestTarget[]>`
    select a.id as "alertId", a.wallet_id as "walletId", w.address, w.alias, a.condition,
           a.threshold::float8 as threshold, a.token, a.notification_method as "notificationMethod",
           a.webhook_url as "webhookUrl", a.recipient, a.webhook_secret as "webhookSecret",
           coalesce(s.risk_score, 0)::int as "riskScore", coalesce(s.risk_factors, '{}') as "riskFactors"
    from alerts a
    join tracked_wallets w on w.id = a.wallet_id
    left join address_state s on s.address = w.address
    where a.id = ${alertId} and a.owner = ${owner}
    for key share of a`;
  return row;
}

/** Replaced secrets kept signing at once, at most: each adds a signature to every message. */
export const MAX_PREVIOUS_SECRETS = 5;

/**
 * Makes `secret` the alert's webhook secret; the current one keeps signing until
 * `previousExpiresAt`, beside the earlier replaced ones still in their grace period (at most
 * MAX_PREVIOUS_SECRETS, the newest). Undefined when the alert is not the owner's. Records the
 * rotation (secret_rotated_at): a create replayed under its Idempotency-Key would otherwise
 * hand out the new secret (routes/alerts.ts); and enters it in the alert's history
 * (alert-changes.ts: `secret_rotated`, with no setting, for the secret is none).
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
      set previous_webhook_secrets = (
            select coalesce(jsonb_agg(kept.entry order by kept.ord), '[]'::jsonb)
            from (
              select entry, ord from (
                select jsonb_build_object('secret', a.webhook_secret, 'expiresAt', ${previousExpiresAt.toISOString()}::text) as entry, 0::bigint as ord
                union all
                select entry, ord from jsonb_array_elements(a.previous_webhook_secrets) with ordinality as earlier(entry, ord)
                where (entry->>'expiresAt')::timestamptz > ${now.toISOString()}::timestamptz
              ) candidates
              order by ord limit ${MAX_PREVIOUS_SECRETS}
            ) kept),
          webhook_secret = ${secret}, secret_rotated_at = ${now.toISOString()}::timestamptz,
          updated_at = ${now.toISOString()}::timestamptz
      from target where a.id = target.id and target.webhook
      returning a.id, a.owner
    ), entered as (
      -- In its history that it rotated, by its owner; never a secret.
      insert into alert_changes (alert_id, owner, at, by, action, changes)
      select id, owner, ${now.toISOString()}::timestamptz, owner, 'secret_rotated', '{}'::jsonb from rotated
    )
    select exists (select 1 from rotated) as rotated from target`;
  return row;
}
