// Alert health: an alert whose notifications keep failing is disabled rather than left to
// fail forever (DESIGN.md section 6). The rules:
// - the first permanent failure (a refusal, or retries exhausted) sets alerts.failing_since;
// - any delivery clears it (recordAttempt does that in the same statement);
// - a permanent failure more than 24 h after the run's previous one starts a new run (a
//   failure now, with nothing counted in the 24 h before it, is no run of 24 h);
// - a permanent failure that continues a run begun 24 h ago or more disables the alert;
// - a 410 Gone from a webhook receiver disables it at once;
// - a redelivery (its owner reopening failed notifications: http/routes/redeliver.ts) clears
//   failing_since, as a PATCH of status does: the reopened notifications are open again, so each
//   counts once more when it fails, at that moment, and its earlier failure no longer dates or
//   continues a run (nor is it a failed row the run's gap rule reads). Kept, a run dated by the
//   very failure redelivered counted that notification twice toward the 24 h;
// - only an active alert's failures count: a paused alert (say, for its receiver's
//   maintenance) is never disabled and its failures start no run, as a pause and a resume
//   each clear failing_since anyway (any PATCH of status does); a disabled one stays as it is;
// - the owner is told by email when we know an address for them (noticeAddress): the token's
//   email claim stored on the alert (owner_email), else the recipient of an email alert;
//   without either the disabling is logged (warn) and shown on the alert (status,
//   disabledReason). The notice is a job on the email queue, retried on RETRY_SCHEDULE
//   (queue/disabled-notices.ts): sent from here, one 451 or a short SMTP outage lost it.
//   It is owed in Postgres too (alerts.disabled_notice_owed, set with the disabling, cleared
//   by the job when it is done): the reconciler queues it again if Redis lost the job.
// The disabling is entered in the alert's history, by `service` (db/queries/alert-changes.ts).
// The disabling is dated (disabled_at), and its notice carries the date: a notice of an earlier
// disabling, still waiting for its retry when the alert is re-enabled and disabled again, is
// dropped instead of telling the owner twice (queue/jobs/disabled-notice.ts).
// A PATCH of status back to active clears failing_since, disabled_reason and disabled_at
// (db/queries/alerts.ts updateAlert).
// A failure counts only while its notification is open (pending or retrying): a stalled BullMQ
// job runs twice at once, and when one run has delivered the notification (clearing
// failing_since) the other run's failure, counted afterwards, started a run of failures, or
// disabled the alert, although that notification got through. One finished as failed by
// another run was counted by that run already. A 410 Gone is no exception: the same endpoint
// has just accepted this very notification, so a 410 after it says less about the endpoint
// than the delivery does (a proxy or deploy in flux, a duplicate the receiver refuses), and a
// wrong disabling silences every later alert until the owner notices; an endpoint that is
// really gone answers 410 to the next notification, which disables the alert then.
import type { TransactionSql } from "postgres";
import type { Sql } from "../db/client.ts";
import { SERVICE_ACTOR, recordAlertChange } from "../db/queries/alert-changes.ts";
import type { Logger } from "../logger.ts";

export const FAILING_DISABLES_AFTER_MS = 24 * 3_600_000;

export type FailureFacts = {
  alertId: string;
  /**
   * The notification whose attempt failed: the failure counts only while it is still open
   * (pending or retrying), not once another run delivered or failed it. Without one (a
   * disabling that no notification's attempt made) it always counts.
   */
  notificationId?: string;
  /** The receiver answered 410 Gone. */
  gone: boolean;
  /** The last attempt's error, for the log. */
  error: string;
  now: Date;
};

/** What decides where an alert's disabled notice goes. */
export type NoticeContacts = { ownerEmail: string | null; notificationMethod: string; recipient: string | null };

type DisabledAlert = { alertId: string; owner: string; disabledReason: string; previousReason: string | null };

/** One disabling to tell the owner about; `disabledAt` tells it apart from a later one. */
export type DisabledNotice = { alertId: string; disabledAt: Date };

export type AlertHealthDeps = {
  sql: Sql;
  logger: Logger;
  /** Queues the notice to the owner (queue/disabled-notices.ts). */
  enqueueNotice: (notice: DisabledNotice) => Promise<void>;
};

/**
 * Where the owner is told: their token's email claim as stored on the alert (at creation, and
 * by each PATCH whose token has one), else an email alert's own recipient (often the very
 * mailbox that keeps refusing it, but the only address known for an alert made without a
 * claim); undefined when neither.
 */
export function noticeAddress(alert: NoticeContacts): string | undefined {
  if (alert.ownerEmail) return alert.ownerEmail;
  return alert.notificationMethod === "email" && alert.recipient ? alert.recipient : undefined;
}

/** Records a permanent failure against the alert; disables it (and tells the owner) when the rules say so. */
export async function recordPermanentFailure(deps: AlertHealthDeps, facts: FailureFacts): Promise<boolean> {
  const disabled = await markFailing(deps.sql, facts);
  if (!disabled) return false;
  deps.logger.warn(
    { alertId: disabled.alertId, owner: disabled.owner, reason: disabled.disabledReason, lastError: facts.error },
    "alert disabled: its notifications keep failing",
  );
  await tellOwner(deps, disabled, facts.now);
  return true;
}

/**
 * One transaction: start (or keep) the failure run of an active alert and disable it if it is
 * due; any other status is left alone, and so is the alert when the failed notification is
 * finished (delivered or failed by another run). Returns the alert only when this call
 * disabled it, so the owner is told once.
 *
 * The run goes on only when its previous failure was at most 24 h before this one. Which was
 * when: failing_since is the run's first; each counted failure after it left its notification
 * failed, dated by its attempt (notifications.updated_at, which nothing changes once it is
 * failed), so a failed notification of the alert within the last 24 h says the run has not
 * broken off. That is looked for only when the run began 24 h ago or more (else it cannot have
 * broken off), through notifications_alert_idx. Without it, a failure on Monday and the next on
 * Wednesday, with nothing sent in between (a quiet wallet), disabled the alert at once, "24
 * hours of failures" after two notifications. No column of its own: a failed notification that
 * did not count (our SMTP server's or Twilio's outage, or our own login, sender or account
 * refused, through every retry) also keeps a run going, though it never starts or ends one; a
 * delivery still ends it.
 *
 * The alert is locked first, in a statement of its own, then the notification is read `for
 * share`: every writer locks an alert before its notifications (db/queries/alert-archive.ts).
 * Until 2026-11-27 the notification came first, and a delete of the alert, holding it while it
 * waited for the notification, closed a circle with this count: Postgres aborted one of the two
 * (the DELETE answered 500, or this job failed). A concurrent run's record of the notification's
 * delivery (db/queries/deliveries.ts) takes the same order, so a failure counted while that
 * record is in flight waits for it and then sees the notification delivered, rather than
 * counting on a snapshot that still shows it open (after the record cleared failing_since, that
 * started a run of failures): it waits on the alert (a record that ends a run holds it) or on
 * the notification's share lock, and reads the rows the record wrote.
 */
async function markFailing(sql: Sql, facts: FailureFacts): Promise<DisabledAlert | undefined> {
  return sql.begin(async (tx) => {
    await tx`select 1 from alerts where id = ${facts.alertId} for update`;
    const disabled = await markLockedFailing(tx, facts);
    // The disabling is the service's change of the alert: entered in its history with it.
    if (disabled) {
      await recordAlertChange(tx, {
        alertId: disabled.alertId,
        owner: disabled.owner,
        at: facts.now,
        by: SERVICE_ACTOR,
        action: "disabled",
        changes: { status: ["active", "disabled"], disabledReason: [disabled.previousReason, disabled.disabledReason] },
      });
    }
    return disabled;
  });
}

/** markFailing's one statement, once the alert is locked. */
async function markLockedFailing(sql: TransactionSql, facts: FailureFacts): Promise<DisabledAlert | undefined> {
  const now = facts.now.toISOString();
  const cutoff = new Date(facts.now.getTime() - FAILING_DISABLES_AFTER_MS).toISOString();
  const notificationId = facts.notificationId ?? null;
  const [row] = await sql<(DisabledAlert & { disabledNow: boolean })[]>`
    with open_notification as materialized (
      select id from notifications
      where id = ${notificationId}::text and status not in ('delivered', 'failed')
      for share
    ), before as (
      select id, failing_since, disabled_reason
      from alerts
      where id = ${facts.alertId} and status = 'active'
        and (${notificationId}::text is null or exists (select 1 from open_notification))
      for update
    ), run as (
      select id,
             case
               when failing_since is null then ${now}::timestamptz
               -- Begun within the last 24 h: its previous failure was too.
               when failing_since >= ${cutoff}::timestamptz then failing_since
               -- Begun earlier: it goes on if one of its failures came within the last 24 h.
               when exists (
                 select 1 from notifications n
                 where n.alert_id = before.id and n.status = 'failed' and n.updated_at >= ${cutoff}::timestamptz
               ) then failing_since
               else ${now}::timestamptz
             end as since,
             disabled_reason as previous_reason
      from before
    ), verdict as (
      select id, since, previous_reason, ${facts.gone}::boolean or since <= ${cutoff}::timestamptz as disable
      from run
    )
    update alerts a
    set failing_since = verdict.since,
        status = case when verdict.disable then 'disabled' else a.status end,
        disabled_reason = case
          when not verdict.disable then a.disabled_reason
          when ${facts.gone}::boolean then 'the webhook endpoint answered 410 Gone'
          else 'its notifications failed from ' || to_char(verdict.since at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') ||
               ' to ' || to_char(${now}::timestamptz at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') ||
               ', none delivered, with no more than 24 hours between one failure and the next'
        end,
        disabled_at = case when verdict.disable then ${now}::timestamptz else a.disabled_at end,
        disabled_notice_owed = verdict.disable or a.disabled_notice_owed,
        updated_at = ${now}::timestamptz
    from verdict
    where a.id = verdict.id
    returning a.id as "alertId", a.owner, a.disabled_reason as "disabledReason", verdict.previous_reason as "previousReason",
              verdict.disable as "disabledNow"`;
  return row?.disabledNow ? row : undefined;
}

/**
 * Queues the notice, dated as markFailing dated the disabling (facts.now, to the millisecond);
 * the job renders it from the alert as it is when it runs, and finds the address then (or
 * warns that there is none). A failed enqueue (Redis away) is logged, not thrown: the
 * notification is recorded failed already, so a retry of its job would not come back here;
 * the notice stays owed in Postgres and the reconciler queues it.
 */
async function tellOwner(deps: AlertHealthDeps, alert: DisabledAlert, disabledAt: Date): Promise<void> {
  try {
    await deps.enqueueNotice({ alertId: alert.alertId, disabledAt });
  } catch (error) {
    deps.logger.warn({ alertId: alert.alertId, owner: alert.owner, err: error }, "could not queue the notice to the owner of a disabled alert");
  }
}
