// The reconciler's view of Postgres: work that should have a job in Redis by now. Each
// query uses a partial index on the unfinished rows, so a sweep over a healthy system
// reads next to nothing.
import type { NotificationMethod } from "../../domain/types.ts";
import type { Sql } from "../client.ts";

// Ids are time-ordered (batch and notification ids start with their creation time), so
// the sweeps page through them by id.

/** Batches stored before `before` and not evaluated yet, by id after `after`. */
export async function unevaluatedBatches(sql: Sql, before: Date, after: string, limit: number): Promise<string[]> {
  const rows = await sql<{ id: string }[]>`
    select id from ingest_batches
    where evaluated_at is null and created_at < ${before.toISOString()}::timestamptz and id > ${after}
    order by id limit ${limit}`;
  return rows.map((row) => row.id);
}

/** Score changes recorded before `before` and not evaluated yet, oldest first. */
export async function unevaluatedScoreChanges(sql: Sql, before: Date, limit: number): Promise<number[]> {
  const rows = await sql<{ id: number }[]>`
    select id::float8 as id from risk_score_history
    where evaluated_at is null and created_at < ${before.toISOString()}::timestamptz
    order by id limit ${limit}`;
  return rows.map((row) => row.id);
}

/** `owner`: its alert's, so that a re-enqueue is ranked in its owner's burst as the first enqueue was. */
export type OpenNotification = { id: string; channel: NotificationMethod; updatedAtMs: number; owner: string };

/** Notifications created before `before` that are neither delivered nor given up, by id after `after`. */
export async function openNotifications(
  sql: Sql,
  before: Date,
  after: string,
  limit: number,
): Promise<OpenNotification[]> {
  return sql<OpenNotification[]>`
    select n.id, n.channel, (extract(epoch from n.updated_at) * 1000)::float8 as "updatedAtMs",
           -- Looked up by key for each row of the page: a join could be planned as a read of every alert.
           (select a.owner from alerts a where a.id = n.alert_id) as owner
    from notifications n
    where n.status in ('pending', 'retrying') and n.created_at < ${before.toISOString()}::timestamptz and n.id > ${after}
    order by n.id limit ${limit}`;
}
