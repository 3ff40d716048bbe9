// What a wallet's alerts fired in a period, for a desk's export (GET /v1/wallets/{id}/events):
// the events of its live alerts and of the alerts deleted while it stayed (the archive,
// alert-archive.ts), oldest first, each with the blockTime of its transaction when that is
// stored and the notification it produced.
//
// The order is (created_at, id), the same in both tables: an event moved to the archive between
// two pages (its alert deleted meanwhile) keeps its place, so a cursor read from either table
// goes on from where it was, and one statement reads both tables in one snapshot, where an event
// is in exactly one of them. created_at is the evaluation's time, shared by the events of one
// evaluation (of several alerts, live or not); the id orders those.
import type { Condition } from "../../domain/types.ts";
import type { Sql } from "../client.ts";
import type { JudgedSettings } from "../schema.ts";
import type { EventWindow } from "./events.ts";

export type WalletEventRow = {
  eventId: string;
  alertId: string;
  /** The alert was deleted (the event is read from deleted_alert_events). */
  alertDeleted: boolean;
  condition: Condition;
  observed: number;
  suppressed: boolean;
  reason: string;
  /** ISO 8601 UTC with Z: when the event was recorded (its evaluation), not the transaction's time. */
  createdAt: string;
  transactionSignature: string | null;
  /** Unix seconds of the event's transaction; null without a signature, or when no transaction of it is stored. */
  blockTime: number | null;
  judgedSettings: JudgedSettings | null;
  riskScore: number | null;
  riskFactors: string[] | null;
  /** The notification the firing produced (the first, as the per-alert list names it); null for a suppressed event, or when none was made. */
  notificationId: string | null;
};

/**
 * One page of the owner's wallet's events in the window, oldest first, from after the event
 * `after` (exclusive). The caller checks the wallet is the owner's first; every read here is
 * scoped by owner too. Undefined when `after` names no event of the wallet's alerts, live or
 * deleted. `hasMore`: whether events go on past this page.
 */
export async function listWalletEvents(
  sql: Sql,
  owner: string,
  walletId: string,
  page: { limit: number; after?: string | undefined },
  window: EventWindow = {},
): Promise<{ rows: WalletEventRow[]; hasMore: boolean } | undefined> {
  const since = window.since === undefined ? sql`` : sql`and e.created_at >= ${window.since}::timestamptz`;
  const until = window.until === undefined ? sql`` : sql`and e.created_at < ${window.until}::timestamptz`;
  let cursor = sql``;
  if (page.after !== undefined) {
    const at = await cursorAt(sql, owner, walletId, page.after);
    if (at === undefined) return undefined;
    // After (at, after) in (created_at, id) order; spelled so that created_at bounds the index range.
    cursor = sql`and e.created_at >= ${at}::timestamptz and (e.created_at > ${at}::timestamptz or e.id > ${page.after})`;
  }
  const take = page.limit + 1;
  // Each alert's events are read from its own index, at most a page from each, and the pages
  // merged: the wallet has at most MAX_ALERTS_PER_WALLET live alerts, and as many deleted ones
  // as it has had. Each alert's part is taken in created_at order alone, which its index gives
  // without a sort (alert_events_alert_newest_idx read backwards, hence "nulls first": created_at
  // is never null, but Postgres does not reason from that; deleted_alert_events_alert_idx
  // forwards), "with ties" so that the events of its page's last instant all come (an
  // evaluation of a batch dates all its events alike); the merge orders them by id.
  // Then, for the page's rows only: the transaction's blockTime by the primary key (signature,
  // leg), the notification of a live event by notifications_event_idx, and those of archived
  // events in one pass over the page's deleted alerts' archived notifications
  // (deleted_notifications_alert_idx, hashed against the page's ids: the archive has no index
  // by event, and a lookup per event read the alert's notifications once per event: 0.5 s a
  // page of 500 at 7,500 notifications an alert). EXPLAIN, 2026-11-28, a wallet of 8 alerts and
  // 2 deleted ones, 4,000 events among 600,000: 3 to 8 ms a page of 500.
  const rows = await sql<WalletEventRow[]>`
    with page as (
      (select e.*, false as alert_deleted
       from alerts a cross join lateral (
         select e.id, e.alert_id, e.condition, e.observed, e.suppressed, e.reason, e.created_at, e.transaction_signature,
                e.judged_settings, e.risk_score, e.risk_factors
         from alert_events e
         where e.alert_id = a.id ${since} ${until} ${cursor}
         order by e.created_at nulls first
         fetch first ${take} rows with ties) e
       where a.wallet_id = ${walletId} and a.owner = ${owner})
      union all
      (select e.*, true as alert_deleted
       from deleted_alerts d cross join lateral (
         select e.id, e.alert_id, e.condition, e.observed, e.suppressed, e.reason, e.created_at, e.transaction_signature,
                e.judged_settings, e.risk_score, e.risk_factors
         from deleted_alert_events e
         where e.alert_id = d.id ${since} ${until} ${cursor}
         order by e.created_at
         fetch first ${take} rows with ties) e
       where d.wallet_id = ${walletId} and d.owner = ${owner})
      order by created_at, id
      limit ${take}
    ),
    -- Materialized: one pass for the page, not one per row.
    archived_notifications as materialized (
      select distinct on (n.event_id) n.event_id, n.id
      from deleted_notifications n
      join unnest(array(select id from page where alert_deleted)) as archived(event_id) on archived.event_id = n.event_id
      where n.alert_id = any(array(select distinct alert_id from page where alert_deleted))
      order by n.event_id, n.created_at, n.id
    )
    select p.id as "eventId", p.alert_id as "alertId", p.alert_deleted as "alertDeleted", p.condition,
           p.observed::float8 as observed, p.suppressed, p.reason,
           to_char(p.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as "createdAt",
           p.transaction_signature as "transactionSignature",
           (select t.block_time::float8 from transactions t where t.signature = p.transaction_signature
            order by t.leg limit 1) as "blockTime",
           p.judged_settings as "judgedSettings", p.risk_score as "riskScore", p.risk_factors as "riskFactors",
           case when p.alert_deleted then an.id
                else (select n.id from notifications n where n.event_id = p.id order by n.created_at, n.id limit 1)
           end as "notificationId"
    from page p left join archived_notifications an on p.alert_deleted and an.event_id = p.id
    order by p.created_at, p.id`;
  return { rows: rows.slice(0, page.limit), hasMore: rows.length > page.limit };
}

/**
 * The created_at of the wallet's event `eventId`, live or archived, as text to the microsecond
 * (a Date would keep milliseconds, and a cursor rounded down would list its own event again).
 */
async function cursorAt(sql: Sql, owner: string, walletId: string, eventId: string): Promise<string | undefined> {
  const [row] = await sql<{ at: string }[]>`
    select to_char(e.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as at
    from alert_events e join alerts a on a.id = e.alert_id
    where e.id = ${eventId} and a.wallet_id = ${walletId} and a.owner = ${owner}
    union all
    select to_char(e.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
    from deleted_alert_events e join deleted_alerts d on d.id = e.alert_id
    where e.id = ${eventId} and d.wallet_id = ${walletId} and d.owner = ${owner}
    limit 1`;
  return row?.at;
}
