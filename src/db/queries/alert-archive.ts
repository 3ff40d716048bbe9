// The archive of deleted alerts (migration 0020): an alert deleted by its owner, or with its
// wallet, is copied here with every event it fired, every notification and every delivery
// attempt, in the transaction that deletes it. The API answers as before (the alert is gone),
// while a compliance desk can still show what it fired and what was sent. The same transaction
// ends the alert's history with its deletion (alert_changes, which the API still serves). Nothing
// here deletes: an operator prunes the archive (README, Risk alerts).
import type { TransactionSql } from "postgres";
import { recordedWebhookUrl } from "../../domain/alert-history.ts";

/** Why an alert was deleted: its own DELETE, or its wallet's. */
export type DeletionReason = "alert deleted" | "wallet deleted";

/** Who deleted it (the caller's token sub) and why. */
export type Deletion = { deletedBy: string; reason: DeletionReason };

/** The owner's alert, or every alert of the owner's wallet. */
export type AlertsToArchive = { owner: string; alertId: string } | { owner: string; walletId: string };

/**
 * The alert's settings and state as they were, named after the alerts columns. A list of what
 * to keep, not the row minus its secrets: a secret column added to alerts later stays out
 * unless someone adds it here. webhook_secret and previous_webhook_secrets are left out (they
 * sign webhooks, and a copy would outlive their rotation), and so is the create request's
 * Idempotency-Key, which is request plumbing rather than a setting. Where the notifications
 * went (webhook_url, recipient) and the owner's email (where disabled-alert notices went) stay.
 */
const SETTINGS = `jsonb_build_object(
  'threshold', a.threshold, 'token', a.token, 'notification_method', a.notification_method,
  'webhook_url', a.webhook_url, 'recipient', a.recipient, 'owner_email', a.owner_email,
  'cooldown_seconds', a.cooldown_seconds, 'window_seconds', a.window_seconds,
  'ignore_own_wallets', a.ignore_own_wallets, 'status', a.status, 'baseline_score', a.baseline_score,
  'last_notified_at', a.last_notified_at, 'failing_since', a.failing_since,
  'disabled_reason', a.disabled_reason, 'disabled_at', a.disabled_at,
  'disabled_notice_owed', a.disabled_notice_owed, 'secret_rotated_at', a.secret_rotated_at,
  'updated_at', a.updated_at)`;

/**
 * A deletion's history entry: every setting of domain/alert-history.ts ALERT_SETTINGS by the
 * API's name and as the API shows it (the threshold a double, as in AlertRow), [value, null];
 * windowSeconds and disabledReason too when there is one, ignoreOwnWallets when it is on. The webhook URL as the history keeps it, without its
 * query (recordedWebhookUrl, which parses URLs as the API does): `recorded.webhook_url`, each
 * alert's from the deleting statement.
 */
const DELETED_CHANGES = `jsonb_build_object(
    'walletId', jsonb_build_array(a.wallet_id, null), 'condition', jsonb_build_array(a.condition, null),
    'status', jsonb_build_array(a.status, null), 'threshold', jsonb_build_array(a.threshold::float8, null),
    'token', jsonb_build_array(a.token, null), 'notificationMethod', jsonb_build_array(a.notification_method, null),
    'webhookUrl', jsonb_build_array(recorded.webhook_url, null), 'recipient', jsonb_build_array(a.recipient, null),
    'cooldownSeconds', jsonb_build_array(a.cooldown_seconds, null))
  || case when a.window_seconds is null then '{}'::jsonb
          else jsonb_build_object('windowSeconds', jsonb_build_array(a.window_seconds, null)) end
  || case when not a.ignore_own_wallets then '{}'::jsonb
          else jsonb_build_object('ignoreOwnWallets', jsonb_build_array(true, null)) end
  || case when a.disabled_reason is null then '{}'::jsonb
          else jsonb_build_object('disabledReason', jsonb_build_array(a.disabled_reason, null)) end`;

/**
 * Copies the alerts and their records into the archive and returns the ids archived (none for
 * an unknown or foreign alert or wallet). Call inside the deleting transaction, just before the
 * delete, and for a wallet after locking its row (`for update`), which holds off new alerts.
 *
 * The locks make the archive exactly what the delete then removes: the alerts' rows are locked
 * first, so no event or notification can be added to them (those inserts take a key-share lock
 * on their alert), and then their notifications, so no delivery can record another attempt
 * (recordAttempts locks its notification, as its update does): a delivery recording one just
 * now is waited for, and its attempt archived. One that records after the delete finds its
 * notification gone and records nothing, as before the archive: that send is on no record.
 *
 * The lock order, which every writer of an alert and its notifications keeps: a wallet, then
 * its alerts by id, then their notifications. A writer that took a notification first and its
 * alert after (a delivery's record that ends the alert's run of failures, the count of a
 * failure, as until 2026-11-27) closed a circle with this delete, which holds the alert while
 * it waits for the notifications: Postgres aborted one of the two with a deadlock, the DELETE
 * (a 500) or the writer (a whole batch of deliveries rolled back, and sent again). They lock
 * the alert first now (db/queries/deliveries.ts recordAttempts, notify/alert-health.ts
 * markFailing); an evaluation locks the alerts it fires, by id, before it writes their events
 * and notifications (pipeline-writes.ts lockAlerts); the rest lock one of the two only (the
 * carrier's status callbacks and failWithoutAttempt a notification; a PATCH, a secret's
 * rotation and a disabled notice's settling an alert; a test notification takes its alert,
 * then writes a new notification no one else holds yet).
 */
export async function archiveAlerts(tx: TransactionSql, which: AlertsToArchive, deletion: Deletion): Promise<string[]> {
  // Every alert of the wallet, whoever its owner (the delete takes them all): the wallet's owner is the check.
  const selected =
    "alertId" in which
      ? tx`a.id = ${which.alertId} and a.owner = ${which.owner}`
      : tx`a.wallet_id = ${which.walletId} and w.owner = ${which.owner}`;
  const alerts = await tx<{ id: string; webhookUrl: string | null }[]>`
    insert into deleted_alerts (id, owner, wallet_id, wallet_address, condition, settings, created_at, deleted_by, reason)
    select a.id, a.owner, a.wallet_id, w.address, a.condition, ${tx.unsafe(SETTINGS)}, a.created_at,
           ${deletion.deletedBy}, ${deletion.reason}
    from alerts a join tracked_wallets w on w.id = a.wallet_id
    where ${selected}
    order by a.id
    for update of a
    returning id, settings->>'webhook_url' as "webhookUrl"`;
  const ids = alerts.map((row) => row.id);
  if (ids.length === 0) return ids;
  // The last entry of each alert's history (alert-changes.ts), which outlives it: its settings as they were, [value, null].
  const recordedUrls = Object.fromEntries(alerts.map((row) => [row.id, recordedWebhookUrl(row.webhookUrl)]));
  await tx`
    insert into alert_changes (alert_id, owner, by, action, changes)
    select a.id, a.owner, ${deletion.deletedBy}, 'deleted', ${tx.unsafe(DELETED_CHANGES)}
    from alerts a join jsonb_each(${JSON.stringify(recordedUrls)}::jsonb) as recorded(alert_id, webhook_url) on recorded.alert_id = a.id
    order by a.id`;

  await tx`
    insert into deleted_alert_events (id, alert_id, dedupe_key, condition, observed, suppressed, transaction_signature, reason, created_at,
                                      judged_settings, risk_score, risk_factors)
    select id, alert_id, dedupe_key, condition, observed, suppressed, transaction_signature, reason, created_at,
           judged_settings, risk_score, risk_factors
    from alert_events where alert_id = any(${ids}::text[])`;
  await tx`
    insert into deleted_notifications (id, alert_id, event_id, channel, destination, payload, status, attempt_count,
                                       next_attempt_at, created_at, delivered_at, updated_at, provider_message_id,
                                       carrier_status, carrier_error_code, carrier_updated_at, list_seq)
    select id, alert_id, event_id, channel, destination, payload, status, attempt_count,
           next_attempt_at, created_at, delivered_at, updated_at, provider_message_id,
           carrier_status, carrier_error_code, carrier_updated_at, list_seq
    from notifications where alert_id = any(${ids}::text[])
    for update`;
  // A statement of its own, after the notifications are locked: it sees every attempt committed.
  await tx`
    insert into deleted_delivery_attempts (id, notification_id, at, duration_ms, status_code, error, response_body, destination)
    select d.id, d.notification_id, d.at, d.duration_ms, d.status_code, d.error, d.response_body, d.destination
    from notifications n join delivery_attempts d on d.notification_id = n.id
    where n.alert_id = any(${ids}::text[])`;
  return ids;
}
