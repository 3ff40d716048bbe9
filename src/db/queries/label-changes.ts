// What each label load changed (label_changes, append-only): written in the load's own
// transaction (pipeline/relabel.ts), so a label never changes without its row; read back one
// address at a time (GET /v1/risk/labels/{address}/history). A load is one PUT or DELETE of
// /v1/risk/labels: its id (lld_…) is the request's, and risk_score_history's `labels:<load id>`
// cause names it.
import type { TransactionSql } from "postgres";
import type { LabelCategory } from "../../domain/types.ts";
import type { Sql } from "../client.ts";
import { withApiSource } from "./risk-labels.ts";

/** A label's verdict: what a change had before, and what it set. */
export type LabelValue = { category: LabelCategory; score: number };

/**
 * One label a load added (`previous` null), changed, or removed (`label` null); `source` as
 * stored ('' for a label loaded without one). A label loaded again as it was is no change.
 */
export type LabelChange = { address: string; source: string; previous: LabelValue | null; label: LabelValue | null };

/** One PUT or DELETE of /v1/risk/labels: its id, and its caller's sub. */
export type LabelLoad = { id: string; by: string };

/** Records the load's changes, in its transaction; `at` is the transaction's start, one for the load. */
export async function insertLabelChanges(tx: TransactionSql, load: LabelLoad, changes: readonly LabelChange[]): Promise<void> {
  if (changes.length === 0) return;
  // One jsonb parameter carries the rows (nulls and all), in the order given: the ids follow it.
  const rows = JSON.stringify(
    changes.map((change) => ({
      address: change.address,
      source: change.source,
      previous_category: change.previous?.category ?? null,
      previous_score: change.previous?.score ?? null,
      category: change.label?.category ?? null,
      score: change.label?.score ?? null,
    })),
  );
  await tx`
    insert into label_changes (load_id, by, address, source, previous_category, previous_score, category, score)
    select ${load.id}, ${load.by}, address, source, previous_category, previous_score, category, score
    from rows from (jsonb_to_recordset(${rows}::text::jsonb) as (
      address text, source text, previous_category text, previous_score smallint, category text, score smallint)) with ordinality
      as t(address, source, previous_category, previous_score, category, score, n)
    order by n`;
}

/** One change of an address's labels as the API answers it. `at` ISO 8601 UTC with Z. */
export type LabelHistoryEntry = {
  loadId: string;
  at: string;
  by: string;
  source: string | null;
  change: "added" | "changed" | "removed";
  previous: LabelValue | null;
  label: LabelValue | null;
};

type HistoryRow = {
  loadId: string;
  at: string;
  by: string;
  source: string;
  previousCategory: LabelCategory | null;
  previousScore: number | null;
  category: LabelCategory | null;
  score: number | null;
};

/**
 * The label changes of `address`, oldest first (in the order they were recorded), a page of
 * `limit` after the changes of load `after` (a loadId). A page ends with the whole of its last
 * load's changes of the address (one per list: a few at most), so that `after` is a load and
 * never splits one: it may hold that many more than `limit`. Undefined when `after` names no
 * load that changed this address.
 */
export async function labelHistory(
  sql: Sql,
  address: string,
  page: { limit: number; after?: string | undefined },
): Promise<{ rows: LabelHistoryEntry[]; hasMore: boolean } | undefined> {
  // Text both ways: postgres.js gives a bigint as a string, and Postgres takes it back as one.
  let from = "0";
  if (page.after !== undefined) {
    const [cursor] = await sql<{ id: string | null }[]>`
      select max(id)::text as id from label_changes where address = ${address} and load_id = ${page.after}`;
    if (!cursor?.id) return undefined;
    from = cursor.id;
  }
  // label_changes_address_idx gives the order. The page's end: its `limit`-th change, or the last
  // change of that change's load if the load goes on past it.
  const rows = await sql<(HistoryRow & { hasMore: boolean })[]>`
    with page as (
      select id, load_id from label_changes where address = ${address} and id > ${from}::bigint order by id limit ${page.limit}
    ), last as (
      select id, load_id from page order by id desc limit 1
    ), ends as (
      select greatest((select id from last), (select max(c.id) from label_changes c where c.address = ${address} and c.load_id = (select load_id from last))) as id
    )
    select c.load_id as "loadId", to_char(c.at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as at, c.by, c.source,
           c.previous_category as "previousCategory", c.previous_score as "previousScore", c.category, c.score,
           exists (select 1 from label_changes m where m.address = ${address} and m.id > (select id from ends)) as "hasMore"
    from label_changes c
    where c.address = ${address} and c.id > ${from}::bigint and c.id <= (select id from ends)
    order by c.id`;
  return { rows: rows.map(entryOf), hasMore: rows[0]?.hasMore ?? false };
}

function entryOf(row: HistoryRow & { hasMore: boolean }): LabelHistoryEntry {
  const previous = valueOf(row.previousCategory, row.previousScore);
  const label = valueOf(row.category, row.score);
  return {
    loadId: row.loadId,
    at: row.at,
    by: row.by,
    source: withApiSource(row).source,
    change: previous === null ? "added" : label === null ? "removed" : "changed",
    previous,
    label,
  };
}

const valueOf = (category: LabelCategory | null, score: number | null): LabelValue | null =>
  category === null || score === null ? null : { category, score };
