// Counterparty labels (PUT, DELETE and GET /v1/risk/labels) and the history queries that find who a label
// change concerns: the addresses that ever dealt with a relabelled address.
import type { TransactionSql } from "postgres";
import type { LabelCategory } from "../../domain/types.ts";
import type { Sql } from "../client.ts";
import { transactionLock } from "./advisory-lock.ts";

type Tx = TransactionSql;

export type LabelInput = { address: string; category: LabelCategory; score: number; source: string | null };

/** Upserts the labels (each address once); returns the addresses whose category or score changed, new ones included. */
export async function upsertLabels(tx: Tx, labels: readonly LabelInput[]): Promise<string[]> {
  if (labels.length === 0) return [];
  const sorted = [...labels].sort((a, b) => (a.address < b.address ? -1 : a.address > b.address ? 1 : 0));
  const addresses = sorted.map((l) => l.address);
  const before = await tx<{ address: string; category: string; score: number }[]>`
    select address, category, score from risk_labels where address = any(${addresses}::text[])
    order by address for update`;
  const previous = new Map(before.map((row) => [row.address, row]));
  await tx`
    insert into risk_labels (address, category, score, source, updated_at)
    select address, category, score, source, now()
    from unnest(${addresses}::text[], ${sorted.map((l) => l.category)}::text[], ${sorted.map((l) => l.score)}::smallint[],
                ${sorted.map((l) => l.source)}::text[]) as u(address, category, score, source)
    on conflict (address) do update
      set category = excluded.category, score = excluded.score, source = excluded.source, updated_at = now()`;
  return sorted
    .filter((l) => {
      const old = previous.get(l.address);
      return !old || old.category !== l.category || old.score !== l.score;
    })
    .map((l) => l.address);
}

/**
 * Deletes the labels of `addresses` (an address without one is skipped); returns those that had one.
 * Locked in address order first, as upsertLabels locks, so a removal and an import of the same
 * addresses wait for each other instead of deadlocking.
 */
export async function deleteLabels(tx: Tx, addresses: readonly string[]): Promise<string[]> {
  if (addresses.length === 0) return [];
  const locked = await tx<{ address: string }[]>`
    select address from risk_labels where address = any(${addresses as string[]}::text[]) order by address for update`;
  if (locked.length === 0) return [];
  const held = locked.map((row) => row.address);
  await tx`delete from risk_labels where address = any(${held}::text[])`;
  return held;
}

/** `updatedAt` ISO 8601 UTC with Z, formatted by Postgres as every date-time the API answers. */
export type StoredLabel = LabelInput & { updatedAt: string };

/** One address's label, or null. */
export async function findLabel(sql: Sql, address: string): Promise<StoredLabel | null> {
  const [row] = await sql<StoredLabel[]>`
    select address, category, score, source, to_char(updated_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as "updatedAt"
    from risk_labels where address = ${address}`;
  return row ?? null;
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
export async function insertLabelRescore(tx: Tx, addresses: readonly string[]): Promise<number> {
  const [row] = await tx<{ id: number }[]>`
    insert into label_rescores (addresses) values (${addresses as string[]}::text[]) returning id::float8 as id`;
  return row!.id;
}

/**
 * Takes an owed rescore: deletes it and returns its addresses (null when another process took
 * it first). The delete holds its row until the rescore commits, so two never run the same one.
 */
export async function takeLabelRescore(tx: Tx, id: number): Promise<string[] | null> {
  const [row] = await tx<{ addresses: string[] }[]>`delete from label_rescores where id = ${id} returning addresses`;
  return row?.addresses ?? null;
}

/** Rescores owed since before `before`, oldest first: their process ended between the two steps. */
export async function pendingLabelRescores(sql: Sql, before: Date, limit: number): Promise<number[]> {
  const rows = await sql<{ id: number }[]>`
    select id::float8 as id from label_rescores where created_at < ${before.toISOString()}::timestamptz order by id limit ${limit}`;
  return rows.map((row) => row.id);
}

/** Every tracked address that sent to or received from one of `addresses` (themselves included if they dealt with each other). */
export async function trackedCounterpartiesOf(tx: Tx, addresses: readonly string[]): Promise<string[]> {
  if (addresses.length === 0) return [];
  const rows = await tx<{ address: string }[]>`
    select address from (
      select from_address as address from transactions where to_address = any(${addresses as string[]}::text[]) and from_address <> to_address
      union
      select to_address from transactions where from_address = any(${addresses as string[]}::text[]) and from_address <> to_address
    ) dealt
    where address in (select address from tracked_wallets)`;
  return rows.map((row) => row.address);
}

export type Exposure = { address: string; category: LabelCategory; score: number };

/** The labels of every counterparty each address ever dealt with (its label exposure, from the whole history). */
export async function labelExposure(tx: Tx, addresses: readonly string[]): Promise<Exposure[]> {
  if (addresses.length === 0) return [];
  return tx<Exposure[]>`
    select distinct cp.address, l.category, l.score
    from (
      select from_address as address, to_address as counterparty from transactions
      where from_address = any(${addresses as string[]}::text[]) and from_address <> to_address
      union
      select to_address, from_address from transactions
      where to_address = any(${addresses as string[]}::text[]) and from_address <> to_address
    ) cp
    join risk_labels l on l.address = cp.counterparty`;
}
