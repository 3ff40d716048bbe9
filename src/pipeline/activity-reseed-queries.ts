// What `npm run reseed-activity` reads from Postgres: the tracked addresses, the evaluated
// batches to replay (streamed in ingest order), and the older history it writes straight
// into the keys that outlive a quiet week (counterparties, newest sends). Only evaluated
// batches: an open one is counted by the evaluation that will claim it.
import type { Sql } from "../db/client.ts";
import type { ReplayBatch } from "./activity-reseed-plan.ts";

// Timestamps arrive as text: drizzle, sharing the pool, turns postgres.js's date parsing off.

/** Every tracked address, with the earliest tracking of it that still stands. */
export async function loadTrackedSince(sql: Sql): Promise<Map<string, Date>> {
  const rows = await sql<{ address: string; since: string }[]>`
    select address, min(tracked_at) as since from tracked_wallets group by address`;
  return new Map(rows.map((row) => [row.address, new Date(row.since)]));
}

/** Whether any batch was ever evaluated (and so counted): stops at the first one found. */
export async function anyBatchEvaluated(sql: Sql): Promise<boolean> {
  const [row] = await sql<{ found: boolean }[]>`
    select exists (select 1 from ingest_batches where evaluated_at is not null) as found`;
  return row!.found;
}

/** The batches not evaluated yet (through ingest_batches_unevaluated_idx). */
export async function openBatchIds(sql: Sql): Promise<string[]> {
  const rows = await sql<{ id: string }[]>`select id from ingest_batches where evaluated_at is null`;
  return rows.map((row) => row.id);
}

/**
 * The evaluated batches ingested from `from` on, in ingest order (the evaluation's: created_at,
 * id), a page at a time through one cursor: one read of the table, however many pages.
 */
export async function* evaluatedBatchesFrom(sql: Sql, from: Date, pageSize: number): AsyncIterable<ReplayBatch[]> {
  const pages = sql<Array<Omit<ReplayBatch, "evaluatedAt"> & { evaluatedAt: string }>>`
    select id, transaction_count as "transactionCount", evaluated_at as "evaluatedAt"
    from ingest_batches
    where evaluated_at is not null and created_at >= ${from.toISOString()}::timestamptz
    order by created_at, id`.cursor(pageSize);
  for await (const rows of pages) yield rows.map((row) => ({ ...row, evaluatedAt: new Date(row.evaluatedAt) }));
}

/** The older history's bounds: batches ingested in [from, before), evaluated once the address was tracked. */
export type OlderWindow = { from: Date; before: Date };

type TrackedChunk = { addresses: string[]; since: Date[] };

/** The chunk as rows (address, since); the times go as text, as timestamptz[] parameters do not serialize here. */
const trackedRows = (sql: Sql, tracked: TrackedChunk) => sql`
  select address, since::timestamptz as since
  from unnest(${tracked.addresses}::text[], ${tracked.since.map((d) => d.toISOString())}::text[]) as u(address, since)`;

/** Per address, the block time of its newest send (its own transaction: failed, or to itself, too) in the window. */
export async function loadOlderLastSends(sql: Sql, tracked: TrackedChunk, window: OlderWindow): Promise<Map<string, number>> {
  // Newest first through transactions_from_newest_idx, stopping at the first send of a batch in the window.
  const rows = await sql<{ address: string; blockTime: number }[]>`
    select w.address, s.block_time::float8 as "blockTime"
    from (${trackedRows(sql, tracked)}) w
    cross join lateral (
      select t.block_time from transactions t join ingest_batches b on b.id = t.batch_id
      where t.from_address = w.address and b.evaluated_at >= w.since
        and b.created_at >= ${window.from.toISOString()}::timestamptz and b.created_at < ${window.before.toISOString()}::timestamptz
      order by t.block_time desc
      limit 1
    ) s`;
  return new Map(rows.map((row) => [row.address, row.blockTime]));
}

/** A counterparty as the set remembers it (a prefix of `prefixLength`), with the newest block time it was dealt with at. */
export type OlderCounterparty = { address: string; counterparty: string; newest: number };

/**
 * Per address, every other side it dealt with (either way, failed transactions too; not
 * itself) in the window, by prefix, newest first.
 */
export async function loadOlderCounterparties(
  sql: Sql,
  tracked: TrackedChunk,
  window: OlderWindow,
  prefixLength: number,
): Promise<OlderCounterparty[]> {
  const from = window.from.toISOString();
  const before = window.before.toISOString();
  return sql<OlderCounterparty[]>`
    select w.address, left(d.other, ${prefixLength}) as counterparty, max(d.block_time)::float8 as newest
    from (${trackedRows(sql, tracked)}) w
    cross join lateral (
      select t.to_address as other, t.block_time, t.batch_id from transactions t
      where t.from_address = w.address and t.to_address <> w.address
      union all
      select t.from_address, t.block_time, t.batch_id from transactions t
      where t.to_address = w.address and t.from_address <> w.address
    ) d
    join ingest_batches b on b.id = d.batch_id
    where b.evaluated_at >= w.since and b.created_at >= ${from}::timestamptz and b.created_at < ${before}::timestamptz
    group by 1, 2
    order by w.address, newest desc`;
}
