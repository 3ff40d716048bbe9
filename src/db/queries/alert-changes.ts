// The history of an alert (alert_changes, migration 0028), append-only: nothing here updates or
// deletes. Each writer of an alert's settings adds its entry in its own transaction, while it
// holds the alert's row lock (a creation, before the alert is visible): so one alert's entries
// draw their ids in the order they commit, and a reader that resumes after the last id it
// received misses none. No foreign key: the history outlives the alert (deleted_alerts keeps
// its id and owner), so that what it was and who changed it can still be shown once it is gone.
import type { TransactionSql } from "postgres";
import type { AlertAction, SettingChanges } from "../../domain/alert-history.ts";
import type { Sql } from "../client.ts";

export type NewAlertChange = {
  alertId: string;
  owner: string;
  /** When: the service's clock as the writer read it. */
  at: Date;
  /** The token's sub, or `service` for the service's own change (alert health). */
  by: string;
  action: AlertAction;
  changes: SettingChanges;
};

/** Who the service's own changes are by. */
export const SERVICE_ACTOR = "service";

export async function recordAlertChange(tx: TransactionSql, change: NewAlertChange): Promise<void> {
  await tx`
    insert into alert_changes (alert_id, owner, at, by, action, changes)
    values (${change.alertId}, ${change.owner}, ${change.at.toISOString()}::timestamptz, ${change.by}, ${change.action},
            ${JSON.stringify(change.changes)}::jsonb)`;
}

export type AlertChangeRow = {
  /** The entry's number: later entries of an alert have larger ones (the cursor, `after`). */
  changeId: number;
  /** ISO 8601 UTC with Z. */
  at: string;
  by: string;
  action: AlertAction;
  changes: SettingChanges;
};

/**
 * Whether the owner has, or had, the alert: live, or in the archive of deleted alerts. The
 * history answers for both; an alert made before the history began has an empty one.
 */
export async function ownsOrOwnedAlert(sql: Sql, owner: string, alertId: string): Promise<boolean> {
  const [row] = await sql<{ found: boolean }[]>`
    select exists (select 1 from alerts where id = ${alertId} and owner = ${owner})
        or exists (select 1 from deleted_alerts where id = ${alertId} and owner = ${owner}) as found`;
  return row!.found;
}

/**
 * The owner's entries of the alert, oldest first, after the entry `after` (0: from the first).
 * alert_changes_alert_idx (alert_id, id) gives the order; one row more than the page says
 * whether the history goes on.
 */
export async function listAlertChanges(
  sql: Sql,
  owner: string,
  alertId: string,
  page: { limit: number; after: number },
): Promise<{ rows: AlertChangeRow[]; hasMore: boolean }> {
  const rows = await sql<AlertChangeRow[]>`
    select id::float8 as "changeId", to_char(at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as at,
           by, action, changes
    from alert_changes
    where alert_id = ${alertId} and owner = ${owner} and id > ${page.after}
    order by id
    limit ${page.limit + 1}`;
  return { rows: rows.slice(0, page.limit), hasMore: rows.length > page.limit };
}
