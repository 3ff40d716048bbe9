// The delivery hot path: load a notification with what its channel needs, and record an
// attempt's outcome. Each is one statement for many notifications: concurrent jobs of a
// worker share a statement (createDeliveryStore gathers the calls made in the same tick),
// so a busy worker makes a few round trips per batch rather than two per webhook.
// Recording is one statement, so the attempt, the notification's new state and the
// alert's health never disagree.
import type { AlertStatus, NotificationMethod, NotificationPayload, NotificationStatus } from "../../domain/types.ts";
import type { Sql } from "../client.ts";
import type { PreviousSecret } from "../schema.ts";
import { claimEarlyCarrierStatuses } from "./carrier-status.ts";
import { asDate } from "./notifications.ts";

export type DeliveryRow = {
  notificationId: string;
  alertId: string;
  /** The alert's owner: each owner has its own share of a webhook receiver's slots (host-slots.ts). */
  owner: string;
  channel: NotificationMethod;
  destination: string;
  payload: NotificationPayload;
  status: NotificationStatus;
  /** Steps of its retry schedule taken in this run (notify/retry-steps.ts): more than one per attempt the recipient failed once a slot is longer than a provider's retry. */
  attemptCount: number;
  nextAttemptAt: Date | null;
  alertStatus: AlertStatus;
  webhookSecret: string | null;
  previousWebhookSecrets: PreviousSecret[];
};

/**
 * The notifications with what their attempt needs. The destination is the alert's as it is
 * now, like its signing secrets: an owner who mends a broken webhookUrl (or recipient) gets
 * the retries still owed there. A notification on another channel than its alert's (the
 * owner's notice that an alert was disabled) keeps its own.
 */
export async function loadForDelivery(sql: Sql, notificationIds: readonly string[]): Promise<Map<string, DeliveryRow>> {
  const rows = await sql<DeliveryRow[]>`
    select n.id as "notificationId", n.alert_id as "alertId", a.owner, n.channel,
           case when n.channel = a.notification_method
                then coalesce(case when n.channel = 'webhook' then a.webhook_url else a.recipient end, n.destination)
                else n.destination end as destination,
           n.payload, n.status,
           n.attempt_count as "attemptCount", n.next_attempt_at as "nextAttemptAt", a.status as "alertStatus",
           a.webhook_secret as "webhookSecret", a.previous_webhook_secrets as "previousWebhookSecrets"
    from notifications n join alerts a on a.id = n.alert_id
    where n.id = any(${notificationIds as string[]}::text[])`;
  const byId = new Map<string, DeliveryRow>();
  for (const row of rows) {
    // A payload written as a JSON string rather than a jsonb object still renders.
    if (typeof row.payload === "string") row.payload = JSON.parse(row.payload) as NotificationPayload;
    row.nextAttemptAt = asDate(row.nextAttemptAt);
    if (typeof row.previousWebhookSecrets === "string") row.previousWebhookSecrets = JSON.parse(row.previousWebhookSecrets) as PreviousSecret[];
    byId.set(row.notificationId, row);
  }
  return byId;
}

export type AttemptRecord = {
  notificationId: string;
  alertId: string;
  /** Where the attempt went: kept with the attempt (an owner's PATCH may move the next one elsewhere), and the notification's as its latest. */
  destination: string;
  at: Date;
  durationMs: number;
  statusCode: number | null;
  error: string | null;
  responseBody: string | null;
  /** The notification's state after this attempt. */
  status: Exclude<NotificationStatus, "pending">;
  nextAttemptAt: Date | null;
  /** The provider's id of the message it accepted (a Twilio SMS's sid), kept for its status callbacks. */
  providerMessageId?: string | null;
  /** How many steps of its retry schedule the attempt takes (notify/retry-steps.ts); 1 unless given. */
  steps?: number;
};

/**
 * Records the attempts and moves each notification on if it is still open (a concurrent
 * run that already finished it wins). A delivery also ends its alert's run of failures.
 * Returns the ids of the notifications that moved. Takes the pool, not a transaction, when
 * an attempt carries a provider's message id (see the claim below).
 */
export async function recordAttempts(
  sql: Sql,
  attempts: readonly AttemptRecord[],
  onClaimError: (error: unknown) => void = () => {},
): Promise<Set<string>> {
  // One jsonb parameter carries the rows: simpler and safer than nine parallel arrays.
  const input = JSON.stringify(
    attempts.map((a) => ({
      notification_id: a.notificationId,
      alert_id: a.alertId,
      destination: a.destination,
      at: a.at.toISOString(),
      duration_ms: a.durationMs,
      status_code: a.statusCode,
      error: storable(a.error),
      response_body: storable(a.responseBody),
      status: a.status,
      next_attempt_at: a.nextAttemptAt?.toISOString() ?? null,
      provider_message_id: a.providerMessageId ?? null,
      steps: a.steps ?? 1,
    })),
  );
  // Planned for each run, not once per connection (see RECORD_ATTEMPTS).
  const rows = await sql.unsafe<{ id: string }[]>(RECORD_ATTEMPTS, [input], { prepare: false });
  // Status callbacks that came before their sid was written here, applied now. A statement of
  // its own, after the record has committed: that is what keeps either side from missing the
  // other (carrier-status.ts).
  // Its failure is reported, not thrown: the attempts are recorded already, and failing the
  // batch would fail its jobs after the fact (a permanent failure would then never count
  // toward disabling its alert, the retry finding the notification finished). The status
  // kept meanwhile expires unapplied: the carrier's word, not the delivery, is lost.
  const sids = attempts.flatMap((a) => (a.providerMessageId ? [a.providerMessageId] : []));
  if (sids.length > 0) await claimEarlyCarrierStatuses(sql, sids).catch(onClaimError);
  return new Set(rows.map((row) => row.id));
}

/**
 * Records a batch of attempts. An unnamed statement, so Postgres plans it for each run against
 * the tables as they are then. As a prepared statement, its plan was made once per connection,
 * on the first runs: planned on a small notifications table (a new deployment, or any table
 * before autovacuum analyzes it), the joins on notification id became sequential scans of the
 * whole table, and stayed so while it grew. In `npm run bench:delivery` that cost 357 µs of
 * Postgres per attempt (26,000 attempts over a table growing to 26,000 rows) against 66
 * planned each time: 2,540 webhooks/s before, 3,186 after.
 */
const RECORD_ATTEMPTS = `
    with input as (
      select * from jsonb_to_recordset($1::text::jsonb) as t(
        notification_id text, alert_id text, destination text, at timestamptz, duration_ms int, status_code int, error text,
        response_body text, status text, next_attempt_at timestamptz, provider_message_id text, steps int)
    ), ending_runs as materialized (
      -- The alerts whose run of failures a delivery ends, locked first and by id: every writer
      -- locks an alert before its notifications (alert-archive.ts), this statement through the
      -- gate in live. Until 2026-11-27 it locked them after the notifications, and with a delete
      -- of the alert (which holds the alert while it waits for the notifications) Postgres
      -- ended one of the two with a deadlock: the DELETE answered 500, or this whole batch
      -- rolled back, and each of its webhooks went out again on its job's retry.
      select a.id from alerts a
      where a.id in (select alert_id from input where status = 'delivered') and a.failing_since is not null
      order by a.id
      for no key update
    ), live as (
      -- Only notifications that still exist: one deleted with its alert while in flight would
      -- otherwise fail the attempts' foreign key, and with it the whole statement, so every
      -- other notification gathered here would be sent again. The lock holds off such a delete
      -- until this statement commits; both writes below read these rows. The count is a gate:
      -- a condition on no row, Postgres settles it (and so locks ending_runs) before it reads
      -- the first notification. The lock is the update's own, taken here in id order: two
      -- batches holding the same notifications (a stalled job run twice beside its first run)
      -- took them in their update's order, each its own, and Postgres ended one of them with
      -- a deadlock; every other delivery recorded in that batch then went out again.
      select input.* from input join notifications n on n.id = input.notification_id
      where (select count(*) from ending_runs) >= 0
      order by n.id
      for no key update of n
    ), attempt as (
      insert into delivery_attempts (notification_id, at, duration_ms, status_code, error, response_body, destination)
      select notification_id, at, duration_ms, status_code, error, response_body, destination from live
    ), healthy as (
      update alerts a set failing_since = null, updated_at = d.at
      from (select alert_id, max(at) as at from input where status = 'delivered' group by alert_id) d
      where a.id = d.alert_id and a.id in (select id from ending_runs)
    )
    -- "Not finished" is spelled so that it does not match notifications_open_idx's predicate:
    -- planned with the open ones counted few (as after any quiet spell), the update read every
    -- open notification through that index to join the few it moves, and a burst has
    -- thousands open.
    update notifications n
    set status = i.status, destination = i.destination, attempt_count = n.attempt_count + coalesce(i.steps, 1), next_attempt_at = i.next_attempt_at,
        delivered_at = case when i.status = 'delivered' then i.at end, updated_at = i.at,
        provider_message_id = coalesce(i.provider_message_id, n.provider_message_id)
    from live i
    where n.id = i.notification_id and n.status not in ('delivered', 'failed')
    returning n.id`;

/** A high surrogate not followed by a low one, or a low one not preceded by a high one. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * What jsonb can hold of a peer's text: neither jsonb nor text can hold U+0000, which a peer's
 * answer may carry, and jsonb refuses half a surrogate pair, which cutting a text at a length
 * (an SMTP server's reply with an emoji at the cut) leaves. Either made the statement fail, and
 * with it every attempt recorded beside it, sent again, failing again, for ever.
 */
const storable = (text: string | null) =>
  text === null ? null : text.replaceAll("\u0000", "").replace(LONE_SURROGATE, "\uFFFD");

/**
 * Which of these attempts are in delivery_attempts already (by notification and time, which its
 * index holds): a write that failed as its answer came back (the connection cut after the
 * commit) did record them, and writing them again would show two sends where one was made.
 */
export async function recordedAmong(sql: Sql, attempts: readonly AttemptRecord[]): Promise<Set<string>> {
  const input = JSON.stringify(attempts.map((a) => ({ notification_id: a.notificationId, at: a.at.toISOString() })));
  const rows = await sql<{ id: string }[]>`
    select d.notification_id as id
    from jsonb_to_recordset(${input}::text::jsonb) as i(notification_id text, at timestamptz)
    join delivery_attempts d on d.notification_id = i.notification_id and d.at = i.at`;
  return new Set(rows.map((row) => row.id));
}

export type DeliveryStore = {
  load: (notificationId: string) => Promise<DeliveryRow | undefined>;
  /**
   * False when the notification was no longer open. `again`: a write of this attempt was tried
   * before and failed, so it may have committed all the same; one that did is not written twice
   * (and answers true).
   */
  record: (attempt: AttemptRecord, options?: { again?: boolean }) => Promise<boolean>;
};

/** At most this many notifications per statement. */
const BATCH_LIMIT = 200;

/** onClaimError: a failed claim of early carrier statuses (see recordAttempts), for the log. */
export function createDeliveryStore(sql: Sql, onClaimError?: (error: unknown) => void): DeliveryStore {
  const load = gather<string, DeliveryRow | undefined>(async (ids) => {
    const rows = await loadForDelivery(sql, [...new Set(ids)]);
    return ids.map((id) => rows.get(id));
  });
  const record = gather<{ attempt: AttemptRecord; again: boolean }, boolean>(async (inputs) => {
    const retried = inputs.filter((input) => input.again).map((input) => input.attempt);
    const done = retried.length > 0 ? await recordedAmong(sql, retried) : new Set<string>();
    const fresh = inputs.filter((input) => !(input.again && done.has(input.attempt.notificationId))).map((input) => input.attempt);
    const moved = fresh.length > 0 ? await recordAttempts(sql, fresh, onClaimError) : new Set<string>();
    return inputs.map(({ attempt, again }) => (again && done.has(attempt.notificationId)) || moved.has(attempt.notificationId));
  });
  return { load, record: (attempt, options = {}) => record({ attempt, again: options.again ?? false }) };
}

/**
 * Turns a function of many inputs into a function of one: the calls made until the event
 * loop turns (or BATCH_LIMIT) share one run. A failed run fails every call in it.
 */
function gather<I, O>(run: (inputs: I[]) => Promise<O[]>): (input: I) => Promise<O> {
  let pending: Array<{ input: I; resolve: (value: O) => void; reject: (error: unknown) => void }> = [];
  const flush = () => {
    const batch = pending;
    pending = [];
    if (batch.length === 0) return; // already flushed at BATCH_LIMIT
    run(batch.map((item) => item.input)).then(
      (outputs) => batch.forEach((item, i) => item.resolve(outputs[i]!)),
      (error: unknown) => batch.forEach((item) => item.reject(error)),
    );
  };
  return (input) =>
    new Promise<O>((resolve, reject) => {
      pending.push({ input, resolve, reject });
      if (pending.length === 1) setImmediate(flush);
      else if (pending.length >= BATCH_LIMIT) flush();
    });
}
