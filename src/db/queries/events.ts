// What an alert fired: its alert_events, newest first, each with the notification it
// produced (none when the event was suppressed by the cooldown), and a suppressed one with the
// cooldown digest that tells of it.
import type { Condition } from "../../domain/types.ts";
import type { Sql } from "../client.ts";
import type { JudgedSettings } from "../schema.ts";

export type AlertEventRow = {
  eventId: string;
  condition: Condition;
  observed: number;
  suppressed: boolean;
  transactionSignature: string | null;
  /** One line saying what happened, as the notification says it. */
  reason: string;
  /** ISO 8601 UTC with Z (see alerts.ts on why it is formatted in SQL). */
  createdAt: string;
  notificationId: string | null;
  /** A suppressed event's cooldown digest (cooldown-digest.ts); null for any other, and when none was made (no destination). */
  digestNotificationId: string | null;
  /** The alert's settings it was judged by, and the wallet's score with it; null for an event recorded before migration 0028. */
  judgedSettings: JudgedSettings | null;
  riskScore: number | null;
  riskFactors: string[] | null;
};

/** createdAt at or after `since`, and before `until` (ISO 8601); either may be left out. */
export type EventWindow = { since?: string | undefined; until?: string | undefined };

/**
 * The caller checks that the alert is theirs first; this reads by alert id only. `after`: only
 * the events the list shows after that one (a cursor past the offset's bound); undefined when
 * no event of the alert has that id. `hasMore` is whether the list goes on past this page.
 * `window` selects by createdAt, `total` included (the cursor aside); a range of
 * alert_events_alert_newest_idx, as the cursor is.
 */
export async function listAlertEvents(
  sql: Sql,
  alertId: string,
  page: { offset: number; limit: number; after?: string | undefined },
  window: EventWindow = {},
): Promise<{ rows: AlertEventRow[]; total: number; hasMore: boolean } | undefined> {
  const since = window.since === undefined ? sql`` : sql`and created_at >= ${window.since}::timestamptz`;
  const until = window.until === undefined ? sql`` : sql`and created_at < ${window.until}::timestamptz`;
  let cursor = sql``;
  if (page.after !== undefined) {
    const [at] = await sql<{ createdAt: Date }[]>`
      select created_at as "createdAt" from alert_events where alert_id = ${alertId} and id = ${page.after}`;
    if (!at) return undefined;
    // The list's order, (created_at desc, id): older, or of the same instant and a larger id.
    cursor = sql`and (created_at < ${at.createdAt} or (created_at = ${at.createdAt} and id > ${page.after}))`;
  }
  // The order is alert_events_alert_newest_idx's, its "nulls last" included: spelled without it
  // (created_at is never null, but Postgres does not reason from that), the index could not
  // give the order, and every page sorted all the alert's events: 0.5 s a page at 200,000. The
  // notification is looked up for the page's rows only, not for those the offset skips. One
  // row more than the page says whether the list goes on.
  const rows = await sql<AlertEventRow[]>`
    select e.id as "eventId", e.condition, e.observed::float8 as observed, e.suppressed,
           e.transaction_signature as "transactionSignature", e.reason,
           to_char(e.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as "createdAt",
           -- alert_id lets the lookup use notifications_alert_idx (event_id has no index).
           (select n.id from notifications n where n.alert_id = e.alert_id and n.event_id = e.id
            order by n.created_at, n.id limit 1) as "notificationId",
           -- The digest that tells of the event, as a digest finds its events (heldBackEvents in
           -- cooldown-digest.ts): the latest window to start at or before it, which is the
           -- event's own (a window starts at the notification that started the cooldown, and the
           -- event made its digest if none was made yet; a notification sent later ends the
           -- windows before it), and of that window's digests the first to end after it (a
           -- cooldown lengthened mid-window gives the later events a digest of their own, which
           -- takes over where the first ends). Two probes of cooldown_digests' key per event.
           case when e.suppressed then (
             select d.notification_id from cooldown_digests d
             where d.alert_id = e.alert_id and d.window_end > e.created_at
               and d.window_start = (select max(s.window_start) from cooldown_digests s
                                     where s.alert_id = e.alert_id and s.window_start <= e.created_at)
             order by d.window_end limit 1) end as "digestNotificationId",
           e.judged_settings as "judgedSettings", e.risk_score as "riskScore", e.risk_factors as "riskFactors"
    from (
      select * from alert_events
      where alert_id = ${alertId} ${since} ${until} ${cursor}
      order by created_at desc nulls last, id
      limit ${page.limit + 1} offset ${page.offset}
    ) e
    order by e.created_at desc nulls last, e.id`;
  const [count] = await sql<{ total: number }[]>`
    select count(*)::int as total from alert_events where alert_id = ${alertId} ${since} ${until}`;
  return { rows: rows.slice(0, page.limit), total: count?.total ?? 0, hasMore: rows.length > page.limit };
}
