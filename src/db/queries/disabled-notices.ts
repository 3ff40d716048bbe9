// What the notice to the owner of a disabled alert says, read when its job runs: the alert
// as it is then (its reason, its wallet's name, the owner's address), not as it was queued.
import type { AlertStatus, Condition, NotificationMethod } from "../../domain/types.ts";
import type { Sql } from "../client.ts";

export type NoticeFacts = {
  alertId: string;
  owner: string;
  status: AlertStatus;
  condition: Condition;
  notificationMethod: NotificationMethod;
  recipient: string | null;
  /** A webhook alert's URL, which the notice names (scheme, host and path only: render.ts destinationShown). */
  webhookUrl: string | null;
  ownerEmail: string | null;
  disabledReason: string | null;
  /** When the service disabled the alert, epoch ms; null once the owner set a status (or before migration 0014). */
  disabledAt: number | null;
  address: string;
  alias: string | null;
};

/** Undefined when the alert (or its wallet) was deleted meanwhile. */
export async function loadNoticeFacts(sql: Sql, alertId: string): Promise<NoticeFacts | undefined> {
  const [row] = await sql<NoticeFacts[]>`
    select a.id as "alertId", a.owner, a.status, a.condition, a.notification_method as "notificationMethod",
           a.recipient, a.webhook_url as "webhookUrl", a.owner_email as "ownerEmail", a.disabled_reason as "disabledReason",
           round(extract(epoch from a.disabled_at) * 1000)::float8 as "disabledAt", w.address, w.alias
    from alerts a join tracked_wallets w on w.id = a.wallet_id
    where a.id = ${alertId}`;
  return row;
}

/**
 * The notice of the disabling dated `disabledAt` (epoch ms) is no longer owed: sent, refused,
 * or moot. A later disabling's notice stays owed; without a date (a job queued before notices
 * were dated) whatever is owed is settled.
 */
export async function settleDisabledNotice(sql: Sql, alertId: string, disabledAt: number | undefined): Promise<void> {
  await sql`
    update alerts set disabled_notice_owed = false
    where id = ${alertId} and disabled_notice_owed
      ${disabledAt === undefined ? sql`` : sql`and round(extract(epoch from disabled_at) * 1000) = ${disabledAt}`}`;
}

export type OwedNotice = { alertId: string; disabledAt: Date };

/** Notices still owed for disablings before `before` (the reconciler's sweep), by alert id. */
export async function owedDisabledNotices(sql: Sql, before: Date, limit: number): Promise<OwedNotice[]> {
  const rows = await sql<{ alertId: string; disabledAt: number }[]>`
    select id as "alertId", round(extract(epoch from disabled_at) * 1000)::float8 as "disabledAt" from alerts
    where disabled_notice_owed and disabled_at < ${before.toISOString()}::timestamptz
    order by id limit ${limit}`;
  return rows.map((row) => ({ alertId: row.alertId, disabledAt: new Date(row.disabledAt) }));
}

/** Those of the alerts whose disabled notice is still owed (its disabling's, whichever that is). */
export async function owedAmong(sql: Sql, alertIds: readonly string[]): Promise<Set<string>> {
  if (alertIds.length === 0) return new Set();
  const rows = await sql<{ id: string }[]>`
    select id from alerts where id = any(${alertIds as string[]}::text[]) and disabled_notice_owed`;
  return new Set(rows.map((row) => row.id));
}
