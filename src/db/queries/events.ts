// What an alert fired: its alert_events, newest first, each with the notification it
// produced (none when the event was suppressed by the cooldown).
import type { Condition } from "../../domain/types.ts";
import type { Sql } from "../client.ts";

export type AlertEventRow = {
  eventId: string;
  condition: Condition;
  observed: number;
  suppressed: boolean;
  transactionSignature: string | null;
  /** ISO 8601 UTC with Z (see alerts.ts on why it is formatted in SQL). */
  createdAt: string;
  notificationId: string | null;
};

/** The caller checks that the alert is theirs first; this reads by alert id only. */
export async function listAlertEvents(
  sql: Sql,
  alertId: string,
  page: { offset: number; limit: number },
): Promise<{ rows: AlertEventRow[]; total: number }> {
  // Order matches alert_events_alert_newest_idx (alert_id, created_at desc, id).
  const rows = await sql<AlertEventRow[]>`
    select e.id as "eventId", e.condition, e.observed::float8 as observed, e.suppressed,
           e.transaction_signature as "transactionSignature",
           to_char(e.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as "createdAt",
           -- alert_id lets the lookup use notifications_alert_idx (event_id has no index).
           (select n.id from notifications n where n.alert_id = e.alert_id and n.event_id = e.id
            order by n.created_at, n.id limit 1) as "notificationId"
    from alert_events e
    where e.alert_id = ${alertId}
    order by e.created_at desc, e.id
    limit ${page.limit} offset ${page.offset}`;
  const [count] = await sql<{ total: number }[]>`
    select count(*)::int as total from alert_events where alert_id = ${alertId}`;
  return { rows, total: count?.total ?? 0 };
}
