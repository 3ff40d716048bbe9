// A caller's tracked wallets joined with what the service knows of their addresses.
// Numbers are cast to float8 in SQL so rows arrive as JSON-ready numbers, and the list
// keeps to one round trip: the total rides along on every row (a window count).
import type { TransactionSql } from "postgres";
import type { LabelCategory, RiskFactor } from "../../domain/types.ts";
import type { Sql } from "../client.ts";
import { archiveAlerts } from "./alert-archive.ts";
import { ownerLock } from "./advisory-lock.ts";
import type { Changed, Deleted, Precondition } from "./guarded-write.ts";
import { effectiveLabel } from "./risk-labels.ts";

export const WALLET_SORT_KEYS = ["balance", "riskScore", "lastActivity", "trackedAt"] as const;
export type WalletSortKey = (typeof WALLET_SORT_KEYS)[number];
export type SortOrder = "asc" | "desc";

export type WalletSummaryRow = {
  walletId: string;
  address: string;
  alias: string | null;
  balance: number;
  tokenAccounts: number;
  nftCount: number;
  riskScore: number;
  /** Unix seconds of the newest transaction, null before any. */
  lastActivity: number | null;
  /** Unix ms when the address's latest account snapshot was stored, null before any. */
  balanceAsOf: number | null;
};

export type TokenAccountRow = { mint: string; symbol: string; balance: number; usdValue: number };
export type NftRow = { mint: string; name: string; collection: string; floorPrice: number };

export type WalletDetailRow = {
  walletId: string;
  address: string;
  alias: string | null;
  balance: number;
  tokenAccounts: TokenAccountRow[];
  nfts: NftRow[];
  riskScore: number;
  riskFactors: RiskFactor[];
  /** The address's own counterparty label, when it carries one: its effective label (the highest score) when several lists label it. */
  label: { category: LabelCategory; score: number; source: string | null } | null;
  tags: string[];
  /** Unix seconds with a fraction: drizzle makes this client return timestamps as text. */
  trackedAt: number;
  lastActivity: number | null;
  /** Unix ms when the address's latest account snapshot was stored, null before any. */
  balanceAsOf: number | null;
};

const SORT_COLUMNS: Record<WalletSortKey, string> = {
  balance: "coalesce(s.balance, 0)",
  riskScore: "coalesce(s.risk_score, 0)",
  lastActivity: "act.last_activity",
  trackedAt: "w.tracked_at",
};

/**
 * Whole milliseconds, floored in numeric (extract's type): seconds with a fraction as float8
 * may land a hair under the millisecond, and the ISO time would then read one early.
 */
const BALANCE_AS_OF = `floor(extract(epoch from s.snapshot_at) * 1000)::float8 as "balanceAsOf"`;

/** Narrows a caller's list: both given, a wallet must meet both. */
export type WalletFilter = {
  /** Only the wallet tracking this address (a caller tracks an address at most once). */
  address?: string;
  /** Only wallets whose tags include this one, compared exactly. */
  tag?: string;
};

/**
 * One page of the owner's wallets and how many there are (of those the filter keeps). The
 * filter is applied to the owner's rows (tracked_wallets_owner_address_key): an address is an
 * index lookup; a tag is tested on each of the owner's rows. No index on tags: with 10,000
 * wallets of one owner (110,000 in all), EXPLAIN ANALYZE put that test at about 3 ms, a page of
 * a tag 500 of them carry at 10-30 ms and one no wallet carries at 4-9 ms, where the unfiltered
 * page took 150 ms or more (it joins and sorts all 10,000). A GIN index on tags helped only the
 * tag no wallet carries: the joins and the sort of what matches are most of the cost.
 */
export async function listWallets(
  sql: Sql,
  owner: string,
  page: { offset: number; limit: number; sortBy: WalletSortKey; order: SortOrder },
  filter: WalletFilter = {},
): Promise<{ rows: WalletSummaryRow[]; total: number }> {
  const byAddress = filter.address === undefined ? sql`` : sql`and w.address = ${filter.address}`;
  const byTag = filter.tag === undefined ? sql`` : sql`and w.tags @> array[${filter.tag}]::text[]`;
  // Both parts come from fixed tables above, never from the request text.
  const orderBy = sql.unsafe(`${SORT_COLUMNS[page.sortBy]} ${page.order === "asc" ? "asc" : "desc"} nulls last, w.id`);
  const rows = await sql<(WalletSummaryRow & { total: number })[]>`
    select w.id as "walletId", w.address, w.alias,
           coalesce(s.balance, 0)::float8 as balance,
           coalesce(s.token_account_count, 0) as "tokenAccounts",
           coalesce(s.nft_count, 0) as "nftCount",
           coalesce(s.risk_score, 0)::int as "riskScore",
           act.last_activity::float8 as "lastActivity",
           ${sql.unsafe(BALANCE_AS_OF)},
           count(*) over ()::int as total
    from tracked_wallets w
    left join address_state s on s.address = w.address
    left join address_activity act on act.address = w.address
    where w.owner = ${owner} ${byAddress} ${byTag}
    order by ${orderBy}
    limit ${page.limit} offset ${page.offset}`;
  if (rows.length > 0) return { rows, total: rows[0]!.total };
  // A page past the end carries no row to read the total from.
  const [count] = await sql<{ total: number }[]>`
    select count(*)::int as total from tracked_wallets w where w.owner = ${owner} ${byAddress} ${byTag}`;
  return { rows, total: count?.total ?? 0 };
}

export async function getWallet(sql: Sql | TransactionSql, owner: string, walletId: string): Promise<WalletDetailRow | undefined> {
  const [row] = await sql<(Omit<WalletDetailRow, "label"> & { labels: StoredLabelRow[] | null })[]>`
    select w.id as "walletId", w.address, w.alias,
           coalesce(s.balance, 0)::float8 as balance,
           coalesce((
             select json_agg(json_build_object('mint', ta.mint, 'symbol', ta.symbol, 'balance', ta.balance::float8,
                                               'usdValue', ta.usd_value::float8)
                             order by ta.usd_value desc, ta.mint)
             from token_accounts ta where ta.address = w.address), '[]'::json) as "tokenAccounts",
           coalesce((
             select json_agg(json_build_object('mint', n.mint, 'name', n.name, 'collection', n.collection,
                                               'floorPrice', n.floor_price::float8)
                             order by n.floor_price desc, n.mint)
             from nfts n where n.address = w.address), '[]'::json) as nfts,
           coalesce(s.risk_score, 0)::int as "riskScore",
           coalesce(s.risk_factors, '{}'::text[]) as "riskFactors",
           (select json_agg(json_build_object('category', l.category, 'score', l.score, 'source', l.source))
            from risk_labels l where l.address = w.address) as labels,
           w.tags,
           extract(epoch from w.tracked_at)::float8 as "trackedAt",
           act.last_activity::float8 as "lastActivity",
           ${sql.unsafe(BALANCE_AS_OF)}
    from tracked_wallets w
    left join address_state s on s.address = w.address
    left join address_activity act on act.address = w.address
    where w.id = ${walletId} and w.owner = ${owner}`;
  if (!row) return undefined;
  const { labels, ...wallet } = row;
  return { ...wallet, label: effectiveLabel(labels) };
}

/** A label of the address as stored (source '' when loaded without one). */
type StoredLabelRow = { category: LabelCategory; score: number; source: string };

/** The address a caller's wallet tracks, or undefined for an unknown or foreign wallet. */
export async function findWalletAddress(sql: Sql, owner: string, walletId: string): Promise<string | undefined> {
  const [row] = await sql<{ address: string }[]>`
    select address from tracked_wallets where id = ${walletId} and owner = ${owner}`;
  return row?.address;
}

/** The id of the caller's wallet tracking `address`, or undefined when the caller does not track it. */
export async function findWalletIdByAddress(sql: Sql, owner: string, address: string): Promise<string | undefined> {
  const [row] = await sql<{ id: string }[]>`
    select id from tracked_wallets where owner = ${owner} and address = ${address}`;
  return row?.id;
}

/** One owner's wallet creates run one at a time (advisory-lock.ts). */
const lockWalletCreates = ownerLock(0x77616c74); // "walt"

export type WalletSlot =
  | { kind: "free" }
  /** The caller tracks the address already: a retry of a create, answered with that wallet whatever the cap says. */
  | { kind: "already-tracked" }
  /** The caller tracks `limit` wallets already (MAX_WALLETS_PER_CALLER): nothing may be written. */
  | { kind: "capped"; limit: number };

/**
 * Whether the owner may track `address`: takes the owner's tracking lock, held until the
 * transaction ends, so the count and the insert that follows it (insertWallet, in the same
 * transaction) cannot both take the last slot in two creates at once. Deletes do not take it:
 * one racing a create only makes the count too high for a moment, never too low. Wallets past
 * a lowered cap are kept; only new ones are refused.
 */
export async function claimWalletSlot(tx: TransactionSql, owner: string, address: string, perCaller: number): Promise<WalletSlot> {
  await lockWalletCreates(tx, owner);
  // Counted up to the cap only: an owner with many wallets costs no more than the cap's rows.
  const [state] = await tx<{ tracked: boolean; inAll: number }[]>`
    select exists (select 1 from tracked_wallets where owner = ${owner} and address = ${address}) as tracked,
           (select count(*) from (select 1 from tracked_wallets where owner = ${owner} limit ${perCaller}) as capped)::int as "inAll"`;
  if (state!.tracked) return { kind: "already-tracked" };
  if (state!.inAll >= perCaller) return { kind: "capped", limit: perCaller };
  return { kind: "free" };
}

/**
 * Inserts the wallet (and the address's shared state if it is new): undefined when the caller
 * already tracks the address, else whether another caller tracked it before. Call inside the
 * tracking transaction (pipeline/track-wallet.ts), which holds the tracking locks, after
 * claimWalletSlot.
 */
export async function insertWallet(
  tx: TransactionSql,
  wallet: { id: string; owner: string; address: string; alias: string | null; tags: string[] },
): Promise<{ trackedBefore: boolean } | undefined> {
  // The outer select does not see the row its own statement inserts: exists() looks at other callers.
  const [row] = await tx<{ trackedBefore: boolean }[]>`
    with state as (
      insert into address_state (address) values (${wallet.address}) on conflict (address) do nothing
    ), inserted as (
      insert into tracked_wallets (id, owner, address, alias, tags)
      values (${wallet.id}, ${wallet.owner}, ${wallet.address}, ${wallet.alias}, ${wallet.tags}::text[])
      on conflict (owner, address) do nothing
      returning id
    )
    select exists (select 1 from tracked_wallets where address = ${wallet.address}) as "trackedBefore" from inserted`;
  return row;
}

/**
 * Applies the given fields and answers the wallet as this change left it: read by the same
 * transaction, which holds the wallet's row lock until it commits, so a PATCH racing this one
 * waits and is never shown in its answer (until 2026-11-28 the answer was read by a second
 * statement after the commit, and one PATCH could answer with the other's tags). The lock is
 * `for no key update`, the update's own: an alert being created on the wallet (its foreign key's
 * key share) is not held up. `precondition` (an If-Match) is judged on the wallet under that lock.
 */
export async function updateWallet(
  sql: Sql,
  owner: string,
  walletId: string,
  changes: { alias?: string | null; tags?: string[] },
  precondition?: Precondition<WalletDetailRow>,
): Promise<Changed<WalletDetailRow>> {
  return sql.begin(async (tx) => {
    const [locked] = await tx`select id from tracked_wallets where id = ${walletId} and owner = ${owner} for no key update`;
    if (!locked) return { kind: "not-found" };
    if (precondition && !(await holds(tx, owner, walletId, precondition))) return { kind: "precondition-failed" };
    await tx`
      update tracked_wallets set
        alias = ${changes.alias === undefined ? tx`alias` : tx`${changes.alias}`},
        tags = ${changes.tags === undefined ? tx`tags` : tx`${changes.tags}::text[]`}
      where id = ${walletId} and owner = ${owner}`;
    const row = await getWallet(tx, owner, walletId);
    return row ? { kind: "changed", row } : { kind: "not-found" };
  });
}

/** Whether the locked wallet, as its owner would read it now, meets the precondition. */
async function holds(tx: TransactionSql, owner: string, walletId: string, precondition: Precondition<WalletDetailRow>): Promise<boolean> {
  const current = await getWallet(tx, owner, walletId);
  return current !== undefined && precondition(current);
}

/**
 * Deletes the wallet; its alerts go with it (foreign key cascade), copied first with their
 * records into the archive by the same transaction (alert-archive.ts), with `deletedBy` (the
 * caller's token sub). Not found: nothing archived. The wallet is locked first: an alert being
 * created on it is waited for and archived, a later one finds no wallet (404). Then its alerts,
 * then their notifications: the lock order every writer keeps (alert-archive.ts).
 * `precondition` (an If-Match) is judged on the wallet as it is under that lock.
 */
export async function deleteWallet(
  sql: Sql,
  owner: string,
  walletId: string,
  deletedBy: string,
  precondition?: Precondition<WalletDetailRow>,
): Promise<Deleted> {
  return sql.begin(async (tx) => {
    const [wallet] = await tx`select id from tracked_wallets where id = ${walletId} and owner = ${owner} for update`;
    if (!wallet) return { kind: "not-found" };
    if (precondition && !(await holds(tx, owner, walletId, precondition))) return { kind: "precondition-failed" };
    await archiveAlerts(tx, { owner, walletId }, { deletedBy, reason: "wallet deleted" });
    await tx`delete from tracked_wallets where id = ${walletId} and owner = ${owner}`;
    return { kind: "deleted" };
  });
}
