// What `npm run reseed-activity` reads from Postgres: the tracked addresses, the evaluated
// batches to replay (streamed in the order they were counted), and the older history it writes straight
// into the keys that outlive a quiet week (counterparties, newest sends). Only evaluated
// batches: an open one is counted by the evaluation that will claim it. And the token that says
// the counters are complete (activity_counters_mark), which the reseed and the workers' check write.
import type { TransactionSql } from "postgres";
import type { Sql } from "../db/client.ts";
import type { ReplayBatch } from "./activity-reseed-plan.ts";

// Timestamps arrive as text: drizzle, sharing the pool, turns postgres.js's date parsing off.

/** Every tracked address, once. */
export async function loadTrackedAddresses(sql: Sql): Promise<string[]> {
  const rows = await sql<{ address: string }[]>`select distinct address from tracked_wallets`;
  return rows.map((row) => row.address);
}

/** The token Redis's "counters complete" key must hold (activity_counters_mark's one row). */
export type CountersMark = { token: string; how: string; setAt: Date };

type MarkRow = { token: string; how: string; setAt: string };
const markOf = (row: MarkRow): CountersMark => ({ token: row.token, how: row.how, setAt: new Date(row.setAt) });

/** The recorded token, or undefined when this deployment never had one. */
export async function readCountersMark(sql: Sql): Promise<CountersMark | undefined> {
  const [row] = await sql<MarkRow[]>`select token, how, set_at as "setAt" from activity_counters_mark`;
  return row && markOf(row);
}

/**
 * Records `mark` unless a token is recorded already (then returns that one, `written` false).
 * `publish` writes the recorded token to Redis before it commits: a worker that sees the row
 * finds the key written (unless Redis lost it since), and one whose insert met this uncommitted
 * row waits for the commit and reads the same token back, so two workers never record or
 * publish different tokens.
 */
export async function recordFirstCountersMark(
  sql: Sql,
  mark: CountersMark,
  publish: (mark: CountersMark) => Promise<void>,
): Promise<{ mark: CountersMark; written: boolean }> {
  return sql.begin(async (tx) => {
    const [inserted] = await tx<MarkRow[]>`
      insert into activity_counters_mark (token, how, set_at)
      values (${mark.token}, ${mark.how}, ${mark.setAt.toISOString()}::timestamptz)
      on conflict do nothing
      returning token, how, set_at as "setAt"`;
    if (inserted) {
      await publish(markOf(inserted));
      return { mark: markOf(inserted), written: true };
    }
    // The conflict waited for the other insert's commit: this statement's snapshot sees its row.
    const [recorded] = await tx<MarkRow[]>`select token, how, set_at as "setAt" from activity_counters_mark`;
    return { mark: markOf(recorded!), written: false };
  });
}

/** Records `mark` in place of any token recorded (the reseed's), publishing it before it commits. */
export async function replaceCountersMark(sql: Sql, mark: CountersMark, publish: (mark: CountersMark) => Promise<void>): Promise<void> {
  await sql.begin(async (tx) => {
    await tx`
      insert into activity_counters_mark (token, how, set_at)
      values (${mark.token}, ${mark.how}, ${mark.setAt.toISOString()}::timestamptz)
      on conflict (single) do update set token = excluded.token, how = excluded.how, set_at = excluded.set_at`;
    await publish(mark);
  });
}

/** The batches not evaluated yet (through ingest_batches_unevaluated_idx). */
export async function openBatchIds(sql: Sql): Promise<string[]> {
  const rows = await sql<{ id: string }[]>`select id from ingest_batches where evaluated_at is null`;
  return rows.map((row) => row.id);
}

/**
 * The evaluated batches ingested from `from` on, in the order the evaluation counted them, a
 * page at a time through one cursor: one read of the table, however many pages. That is the
 * order of their evaluations (evaluated_at: a run counts only once the runs ahead of it have
 * committed, count-order.ts), and inside one (one evaluated_at) ingest order, the group's.
 * Ingest order alone is not it: created_at is when the ingest's transaction began, and one that
 * committed after a later-begun batch was evaluated is claimed, and counted, after that batch.
 */
export async function* evaluatedBatchesFrom(sql: Sql, from: Date, pageSize: number): AsyncIterable<ReplayBatch[]> {
  const pages = sql<Array<Omit<ReplayBatch, "evaluatedAt"> & { evaluatedAt: string }>>`
    select id, transaction_count as "transactionCount", evaluated_at as "evaluatedAt"
    from ingest_batches
    where evaluated_at is not null and created_at >= ${from.toISOString()}::timestamptz
    order by evaluated_at, created_at, id`.cursor(pageSize);
  for await (const rows of pages) yield rows.map((row) => ({ ...row, evaluatedAt: new Date(row.evaluatedAt) }));
}

/**
 * The older history's bounds: evaluated batches ingested in [from, before), whether or not the
 * address was tracked then (tracking seeds the counters from the history before it: activity-seed.ts).
 */
export type OlderWindow = { from: Date; before: Date };

/** The addresses as rows. */
const trackedRows = (sql: Sql | TransactionSql, addresses: readonly string[]) => sql`
  select unnest(${addresses as string[]}::text[]) as address`;

/** An address's newest send in the window, and when the newest of its batches there was evaluated. */
export type OlderLastSend = { blockTime: number; evaluatedAt: number };

/**
 * Per address, the block time of its newest send (its own transaction: failed, or to itself,
 * too) in the window, with when that batch was evaluated (Unix seconds).
 */
export async function loadOlderLastSends(
  sql: Sql | TransactionSql,
  tracked: readonly string[],
  window: OlderWindow,
): Promise<Map<string, OlderLastSend>> {
  // Newest first through transactions_from_newest_idx, stopping at the first send of a batch in
  // the window: "nulls last" as the index has it, or Postgres read and sorted every send.
  const rows = await sql<Array<{ address: string } & OlderLastSend>>`
    select w.address, s.block_time::float8 as "blockTime", extract(epoch from s.evaluated_at)::float8 as "evaluatedAt"
    from (${trackedRows(sql, tracked)}) w
    cross join lateral (
      select t.block_time, b.evaluated_at from transactions t join ingest_batches b on b.id = t.batch_id
      where t.from_address = w.address and b.evaluated_at is not null
        and b.created_at >= ${window.from.toISOString()}::timestamptz and b.created_at < ${window.before.toISOString()}::timestamptz
      order by t.block_time desc nulls last
      limit 1
    ) s`;
  return new Map(rows.map((row) => [row.address, { blockTime: row.blockTime, evaluatedAt: row.evaluatedAt }]));
}

/**
 * A counterparty as the set remembers it (a prefix of `prefixLength`), with the newest block
 * time it was dealt with at; `touched`: when the newest of the address's batches in the window
 * was evaluated (Unix seconds, the same on each of its rows).
 */
export type OlderCounterparty = { address: string; counterparty: string; newest: number; touched: number };

/**
 * Per address, the other sides it dealt with (either way, failed transactions too; not itself)
 * in the window, by prefix, newest first: at most `limit` of them (the set's cap), so that an
 * address with millions of counterparties (an exchange's) costs no more memory than the set.
 */
export async function loadOlderCounterparties(
  sql: Sql | TransactionSql,
  tracked: readonly string[],
  window: OlderWindow,
  prefixLength: number,
  limit: number,
): Promise<OlderCounterparty[]> {
  const from = window.from.toISOString();
  const before = window.before.toISOString();
  // The window function runs over every group before the limit: `touched` is the address's, not its newest 1,000's.
  return sql<OlderCounterparty[]>`
    select w.address, c.counterparty, c.newest, c.touched
    from (${trackedRows(sql, tracked)}) w
    cross join lateral (
      select left(d.other, ${prefixLength}) as counterparty, max(d.block_time)::float8 as newest,
             extract(epoch from max(max(b.evaluated_at)) over ())::float8 as touched
      from (
        select t.to_address as other, t.block_time, t.batch_id from transactions t
        where t.from_address = w.address and t.to_address <> w.address
        union all
        select t.from_address, t.block_time, t.batch_id from transactions t
        where t.to_address = w.address and t.from_address <> w.address
      ) d
      join ingest_batches b on b.id = d.batch_id
      where b.evaluated_at is not null and b.created_at >= ${from}::timestamptz and b.created_at < ${before}::timestamptz
      group by 1
      order by newest desc
      limit ${limit}
    ) c
    order by w.address, c.newest desc`;
}
