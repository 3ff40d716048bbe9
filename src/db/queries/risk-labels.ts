// Counterparty labels (PUT, DELETE and GET /v1/risk/labels) and the history queries that find who a label
// change concerns: the addresses that ever dealt with a relabelled address.
//
// A label is one list's verdict on an address: keyed by address and source, so that OFAC's list and
// each vendor's keep their own rows, and one list's import or removal never touches another's. A
// label loaded without a source is stored with source '' and is null in and out of the API, and in
// what the evaluation reads (pipeline.ts's loadLabels, through withApiSource): the '' never leaves
// the queries. Everything that locks label rows locks them in (address, source) order,
// byte by byte as Postgres orders the key (COLLATE "C"), so an import and a removal of the same
// labels wait for each other instead of deadlocking.
import type { TransactionSql } from "postgres";
import { FACTOR_WEIGHTS, labelFactor } from "../../domain/risk/index.ts";
import type { LabelCategory } from "../../domain/types.ts";
import type { Sql } from "../client.ts";
import { transactionLock } from "./advisory-lock.ts";
import type { LabelChange, LabelValue } from "./label-changes.ts";

type Tx = TransactionSql;

/** A label as the API takes it: `source` null when the list gave none. */
export type LabelInput = { address: string; category: LabelCategory; score: number; source: string | null };

/** The stored source of a label loaded without one. */
const NO_SOURCE = "";
const storedSource = (source: string | null): string => source ?? NO_SOURCE;
const apiSource = (source: string): string | null => (source === NO_SOURCE ? null : source);

/**
 * A stored label as everything outside the queries sees it: source null for none. Before this,
 * the evaluation carried the stored '' into notifications (a webhook's `"source": ""`, an email's
 * "source )") while the API said null. A label with a source is returned as it is.
 */
export const withApiSource = <T extends { source: string }>(label: T): Omit<T, "source"> & { source: string | null } =>
  label.source === NO_SOURCE ? { ...label, source: null } : label;

/**
 * Byte order of the strings' UTF-8 (Postgres's COLLATE "C"), which is code point order. JavaScript's
 * `<` compares UTF-16 code units, which differs only where a surrogate (a code point above U+FFFF)
 * meets a unit from U+E000 to U+FFFF: ranked here as their code points rank.
 */
export function compareBytewise(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return codePointRank(x) - codePointRank(y);
  }
  return a.length - b.length;
}

const codePointRank = (unit: number): number => (unit >= 0xd800 && unit <= 0xdfff ? unit + 0x2000 : unit >= 0xe000 ? unit - 0x800 : unit);

/** (address, source) order: the order in which label rows are locked. */
const byKey = (a: { address: string; source: string }, b: { address: string; source: string }): number =>
  compareBytewise(a.address, b.address) || compareBytewise(a.source, b.source);

type RankedLabel = { category: LabelCategory; score: number; source: string };

const factorWeight = (label: RankedLabel): number => {
  const factor = labelFactor(label.category, label.score);
  return factor === null ? 0 : FACTOR_WEIGHTS[factor];
};

/**
 * The order of an address's labels, its effective label first (the one GET answers at its top
 * level, the wallet detail shows, and suspicious_counterparty judges the address by): the highest
 * score; on a tie, the category whose factor weighs most (sanctioned, mixer, scam/hack/darknet, then
 * the rest); then the source in byte order, a label without one first. Takes stored sources ('').
 */
export function compareLabels(a: RankedLabel, b: RankedLabel): number {
  return b.score - a.score || factorWeight(b) - factorWeight(a) || compareBytewise(a.source, b.source);
}

const labelKey = (label: { address: string; source: string }): string => `${label.address}\u0000${label.source}`;

/**
 * Stores the labels (each address and source once) as written by `updatedBy` (the caller's sub),
 * and returns what changed: each label added, or whose category or score changed, with what it
 * had before. A label loaded again as it is stays as it is, its updated_by and updated_at those
 * of the load that set it: an identical re-load is no change (no label_changes row, no rescore).
 */
export async function upsertLabels(tx: Tx, labels: readonly LabelInput[], updatedBy: string | null): Promise<LabelChange[]> {
  if (labels.length === 0) return [];
  // Each key once (the last wins): one statement cannot write a row twice.
  const stored = labels.map((label) => ({ ...label, source: storedSource(label.source) }));
  const sorted = [...new Map(stored.map((label) => [labelKey(label), label])).values()].sort(byKey);
  // Only the rows this import writes: another list's label of the same address is not its business.
  const previous = await lockLabels(tx, sorted);
  // A new label is inserted unless another load inserted it since the lock above (it committed
  // meanwhile, or this insert waited for it to): then it is locked now and compared as any other,
  // its previous values that load's. One deleted again in between is tried again.
  const added = new Set<string>();
  let absent = sorted.filter((label) => !previous.has(labelKey(label)));
  while (absent.length > 0) {
    const inserted = new Set((await insertNewLabels(tx, absent, updatedBy)).map(labelKey));
    for (const key of inserted) added.add(key);
    const raced = absent.filter((label) => !inserted.has(labelKey(label)));
    for (const [key, value] of await lockLabels(tx, raced)) previous.set(key, value);
    absent = raced.filter((label) => !previous.has(labelKey(label)));
  }
  const changes = sorted.flatMap((label): LabelChange[] => {
    const value = { category: label.category, score: label.score };
    if (added.has(labelKey(label))) return [{ address: label.address, source: label.source, previous: null, label: value }];
    const old = previous.get(labelKey(label))!;
    return old.category === label.category && old.score === label.score ? [] : [{ address: label.address, source: label.source, previous: old, label: value }];
  });
  const replaced = changes.filter((change) => change.previous !== null);
  if (replaced.length > 0) {
    await tx`
      update risk_labels l set category = u.category, score = u.score, updated_by = ${updatedBy}, updated_at = now()
      from unnest(${replaced.map((c) => c.address)}::text[], ${replaced.map((c) => c.source)}::text[],
                  ${replaced.map((c) => c.label!.category)}::text[], ${replaced.map((c) => c.label!.score)}::smallint[]) as u(address, source, category, score)
      where l.address = u.address and l.source = u.source`;
  }
  return changes;
}

type StoredKey = { address: string; source: string };

/** The labels of these keys that exist, locked in (address, source) order, by key. */
async function lockLabels(tx: Tx, keys: readonly StoredKey[]): Promise<Map<string, LabelValue>> {
  if (keys.length === 0) return new Map();
  const rows = await tx<(StoredKey & LabelValue)[]>`
    select l.address, l.source, l.category, l.score
    from risk_labels l
    join unnest(${keys.map((k) => k.address)}::text[], ${keys.map((k) => k.source)}::text[]) as k(address, source)
      on l.address = k.address and l.source = k.source
    order by l.address, l.source for update of l`;
  return new Map(rows.map((row) => [labelKey(row), { category: row.category, score: row.score }]));
}

/** Inserts the labels that no row holds; returns the keys inserted (one inserted by another load meanwhile is not). */
async function insertNewLabels(tx: Tx, labels: ReadonlyArray<StoredKey & LabelValue>, updatedBy: string | null): Promise<StoredKey[]> {
  return tx<StoredKey[]>`
    insert into risk_labels (address, source, category, score, updated_by, updated_at)
    select address, source, category, score, ${updatedBy}, now()
    from unnest(${labels.map((l) => l.address)}::text[], ${labels.map((l) => l.source)}::text[], ${labels.map((l) => l.category)}::text[],
                ${labels.map((l) => l.score)}::smallint[]) as u(address, source, category, score)
    on conflict (address, source) do nothing
    returning address, source`;
}

/**
 * Deletes the labels of `addresses`: those of `source` only (null: the labels loaded without one),
 * or every source's when `source` is undefined. An address without such a label is skipped.
 * Returns each label removed, with what it was. Locked in (address, source) order first, as
 * upsertLabels locks.
 */
export async function deleteLabels(tx: Tx, addresses: readonly string[], source?: string | null): Promise<LabelChange[]> {
  if (addresses.length === 0) return [];
  const ofSource = source === undefined ? tx`` : tx`and source = ${storedSource(source)}`;
  const locked = await tx<(StoredKey & LabelValue)[]>`
    select address, source, category, score from risk_labels where address = any(${addresses as string[]}::text[]) ${ofSource}
    order by address, source for update`;
  if (locked.length === 0) return [];
  await tx`
    delete from risk_labels l
    using unnest(${locked.map((row) => row.address)}::text[], ${locked.map((row) => row.source)}::text[]) as k(address, source)
    where l.address = k.address and l.source = k.source`;
  return locked.map((row) => ({ address: row.address, source: row.source, previous: { category: row.category, score: row.score }, label: null }));
}

/** One label of an address as the API answers it. `updatedAt` ISO 8601 UTC with Z, formatted by Postgres as every date-time the API answers. */
export type SourceLabel = { category: LabelCategory; score: number; source: string | null; updatedAt: string };

/** An address's effective label (see compareLabels) at the top level, and every source's label in `labels`, in that order. */
export type StoredLabels = { address: string } & SourceLabel & { labels: SourceLabel[] };

/** The labels of one address, or null when it has none. */
export async function findLabels(sql: Sql, address: string): Promise<StoredLabels | null> {
  const rows = await sql<(RankedLabel & { updatedAt: string })[]>`
    select category, score, source, to_char(updated_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as "updatedAt"
    from risk_labels where address = ${address}`;
  if (rows.length === 0) return null;
  const labels = [...rows]
    .sort(compareLabels)
    .map((row): SourceLabel => ({ category: row.category, score: row.score, source: apiSource(row.source), updatedAt: row.updatedAt }));
  return { address, ...labels[0]!, labels };
}

/** The effective label of a set of stored labels (see compareLabels), with its source as the API answers it; null when there is none. */
export function effectiveLabel(labels: readonly RankedLabel[] | null): { category: LabelCategory; score: number; source: string | null } | null {
  if (!labels || labels.length === 0) return null;
  const [first] = [...labels].sort(compareLabels);
  return { category: first!.category, score: first!.score, source: apiSource(first!.source) };
}

// A tracking scores the new address from the labels of its counterparties; a label change
// rescores the tracked addresses that dealt with the relabelled ones. Run side by side, each
// could miss the other (neither sees what the other has not committed), so label changes hold
// this lock shared and a tracking takes it exclusively, before anything else: a lock of its
// own, not the counters' lock that every ingest shares, so a long label import keeps a
// tracking waiting, never the ingests queued behind it.
const LABEL_EXPOSURE_LOCK = transactionLock(0x6c61626c); // "labl"

/** Held by a label change until it commits. */
export const shareLabelExposure = LABEL_EXPOSURE_LOCK.share;

/** Held by a tracking until it commits: waits for the label changes under way, holds new ones back. */
export const lockLabelExposure = LABEL_EXPOSURE_LOCK.take;

/** Records that the tracked addresses that dealt with `addresses` are owed a rescore (in the labels' transaction). */
export async function insertLabelRescore(tx: Tx, addresses: readonly string[], loadId: string): Promise<number> {
  const [row] = await tx<{ id: number }[]>`
    insert into label_rescores (addresses, load_id) values (${addresses as string[]}::text[], ${loadId}) returning id::float8 as id`;
  return row!.id;
}

/**
 * Claims an owed rescore for one chunk of its work: returns its relabelled addresses, the last
 * tracked address its committed chunks rescored (null: none yet), and the lease set on it (its
 * created_at, moved to now: the reconciler takes only a rescore left untouched for its grace
 * period). `lease` null takes the rescore whoever held it; a lease from an earlier chunk
 * takes it only if nobody took it over since. Null when the rescore is done (deleted) or was taken
 * over. The row stays locked until the chunk commits, so two chunks of it never run side by side.
 */
export async function claimLabelRescore(
  tx: Tx,
  id: number,
  lease: string | null,
  staleBefore?: Date,
): Promise<{ addresses: string[]; doneThrough: string | null; lease: string; loadId: string | null } | null> {
  // A take-over (the reconciler's: staleBefore) never waits for a chunk under way, whose
  // transaction holds the row (its renewal not yet visible): it skips the row, and takes it only
  // when no chunk runs and none has started since staleBefore. Waiting instead, it would take over
  // a live rescore the moment its chunk committed (stopping that run), and, were chunks as long as
  // the grace period, do so at every sweep.
  const where =
    staleBefore !== undefined
      ? tx`id = (select id from label_rescores where id = ${id} and created_at < ${staleBefore.toISOString()}::timestamptz for update skip locked)`
      : lease === null
        ? tx`id = ${id}`
        : tx`id = ${id} and created_at = ${lease}::timestamptz`;
  const [row] = await tx<{ addresses: string[]; doneThrough: string | null; lease: string; loadId: string | null }[]>`
    update label_rescores set created_at = now() where ${where}
    returning addresses, done_through as "doneThrough", created_at::text as lease, load_id as "loadId"`;
  return row ?? null;
}

/**
 * Records, in a chunk's transaction (which holds the rescore's row: claimLabelRescore), the last
 * tracked address it rescored: a run that takes the rescore over continues after it.
 */
export async function recordLabelRescoreProgress(tx: Tx, id: number, doneThrough: string): Promise<void> {
  await tx`update label_rescores set done_through = ${doneThrough} where id = ${id}`;
}

/** Deletes an owed rescore, in the transaction of its last chunk (which holds its row: claimLabelRescore). */
export async function finishLabelRescore(tx: Tx, id: number): Promise<void> {
  await tx`delete from label_rescores where id = ${id}`;
}

/**
 * Rescores owed and untouched since before `before`, oldest first: their process ended between the
 * two steps, or during the rescore (each chunk moves created_at forward: claimLabelRescore).
 */
export async function pendingLabelRescores(sql: Sql, before: Date, limit: number): Promise<number[]> {
  const rows = await sql<{ id: number }[]>`
    select id::float8 as id from label_rescores where created_at < ${before.toISOString()}::timestamptz order by id limit ${limit}`;
  return rows.map((row) => row.id);
}

/**
 * Every tracked address that sent to or received from one of `addresses` (themselves included if
 * they dealt with each other), in address order (byte order, as lockAddressScores locks): a rescore
 * locks them chunk by chunk in this order, so its chunks and an evaluation never lock in opposite
 * orders. `after` (a rescore's done_through): only the addresses after it in that order.
 */
export async function trackedCounterpartiesOf(tx: Tx, addresses: readonly string[], after: string | null = null): Promise<string[]> {
  if (addresses.length === 0) return [];
  const rows = await tx<{ address: string }[]>`
    select address from (
      select from_address as address from transactions where to_address = any(${addresses as string[]}::text[]) and from_address <> to_address
      union
      select to_address from transactions where from_address = any(${addresses as string[]}::text[]) and from_address <> to_address
    ) dealt
    where address in (select address from tracked_wallets)${after === null ? tx`` : tx` and address > ${after}`}
    order by address`;
  return rows.map((row) => row.address);
}

export type Exposure = { address: string; category: LabelCategory; score: number };

/**
 * The labels of every counterparty each address ever dealt with, every source's (its label
 * exposure, from the whole history); with `since`, of its transactions with block times from
 * then on only (through the from/to indexes' block times: a tracking's second look, track-wallet.ts).
 */
export async function labelExposure(tx: Tx, addresses: readonly string[], since: number | null = null): Promise<Exposure[]> {
  if (addresses.length === 0) return [];
  const from = since === null ? tx`` : tx` and block_time >= ${since}`;
  return tx<Exposure[]>`
    select distinct cp.address, l.category, l.score
    from (
      select from_address as address, to_address as counterparty from transactions
      where from_address = any(${addresses as string[]}::text[]) and from_address <> to_address${from}
      union
      select to_address, from_address from transactions
      where to_address = any(${addresses as string[]}::text[]) and from_address <> to_address${from}
    ) cp
    join risk_labels l on l.address = cp.counterparty`;
}
