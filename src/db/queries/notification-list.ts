// An alert's notifications, oldest first, for GET /v1/risk/alerts/{id}/notifications: what a
// receiver that missed webhooks (down, or its dedupe store lost) reconciles against, tests and
// cooldown digests included, which no event names.
//
// The order is list_seq's, the order the alert's notifications were committed in (migration
// 0027 numbers each under the alert's lock), not the ids': an id is stamped with its writer's
// clock before that lock, so one committed later can have a smaller id than one already listed.
// In list_seq order a notification committed after a page was read comes after that page's
// last, so a poller that resumes from the last id it received misses none and repeats none.
import type { NotificationPayload, NotificationStatus } from "../../domain/types.ts";
import type { Sql } from "../client.ts";
import { summaryColumns, summaryOf, type NotificationSummary, type SummaryRow } from "./notifications.ts";

export type NotificationPage = {
  limit: number;
  /** Only the notifications listed after this one: the notificationId of the last one received. */
  after?: string | undefined;
  status?: NotificationStatus | undefined;
  type?: NotificationPayload["type"] | undefined;
};

/**
 * The caller checks that the alert is theirs first; this reads by alert id only. Undefined when
 * `after` names no notification of the alert. `hasMore`: the list goes on past this page (as of
 * now: a poller comes back with the same cursor for what is committed later).
 */
export async function listAlertNotifications(
  sql: Sql,
  alertId: string,
  page: NotificationPage,
): Promise<{ rows: NotificationSummary[]; hasMore: boolean } | undefined> {
  let cursor = sql``;
  if (page.after !== undefined) {
    // Text both ways: postgres.js gives a bigint as a string, and Postgres takes it back as one.
    const [at] = await sql<{ listSeq: string }[]>`
      select list_seq::text as "listSeq" from notifications where alert_id = ${alertId} and id = ${page.after}`;
    if (!at) return undefined;
    cursor = sql`and (n.list_seq, n.id) > (${at.listSeq}::bigint, ${page.after})`;
  }
  const status = page.status === undefined ? sql`` : sql`and n.status = ${page.status}`;
  const type = page.type === undefined ? sql`` : sql`and n.payload->>'type' = ${page.type}`;
  // notifications_alert_list_idx gives the order from the cursor on; the filters are checked on
  // the way (an alert's notifications are mostly of one type and status, so a page of the rare
  // ones reads the alert's others in between). One row more than the page says whether it goes on.
  const rows = await sql<SummaryRow[]>`
    select ${summaryColumns(sql)}
    from notifications n
    where n.alert_id = ${alertId} ${cursor} ${status} ${type}
    order by n.list_seq, n.id
    limit ${page.limit + 1}`;
  return { rows: rows.slice(0, page.limit).map(summaryOf), hasMore: rows.length > page.limit };
}
