// What the detection pipeline reads per batch. Every query is set-based (`= any($1)`): a
// batch costs a handful of statements whatever its size, never one per transaction.
import type { LabelCategory, NotificationMethod, RiskFactor, Transaction } from "../../domain/types.ts";
import type { AlertRule, ScoreChange, StoredSend } from "../../domain/conditions/index.ts";
import type { TransactionSql } from "postgres";
import type { Sql } from "../client.ts";
import { compareLabels, withApiSource } from "./risk-labels.ts";

export type BatchRow = { id: string; evaluated: boolean };

export async function findBatch(sql: Sql, batchId: string): Promise<BatchRow | undefined> {
  const [row] = await sql<BatchRow[]>`
    select id, evaluated_at is not null as evaluated from ingest_batches where id = ${batchId}`;
  return row;
}

/**
 * Those of the batches not evaluated yet. The batches are found by id first (a materialized
 * CTE is planned apart): with "not evaluated" in the same WHERE, Postgres could read every open
 * batch through ingest_batches_unevaluated_idx to find these, as it did when it had planned on
 * few open ones (after any quiet spell) and a backlog had tens of thousands. The order waits
 * ask this every 5 ms.
 */
export async function openBatchesAmong(sql: Sql | TransactionSql, batchIds: readonly string[]): Promise<string[]> {
  if (batchIds.length === 0) return [];
  const rows = await sql<{ id: string }[]>`
    with batch as materialized (
      select id, evaluated_at from ingest_batches where id = any(${batchIds as string[]}::text[])
    )
    select id from batch where evaluated_at is null`;
  return rows.map((row) => row.id);
}

/** A stored transaction with the ingest batch it came in. */
export type BatchTransaction = Transaction & { batchId: string };

/**
 * The batches' transactions in chain order (block time, slot, signature, leg: a transaction's
 * movements side by side), numbers as JS numbers.
 */
export async function loadBatchTransactions(sql: Sql, batchIds: readonly string[]): Promise<BatchTransaction[]> {
  return sql<BatchTransaction[]>`
    select signature, leg, type, amount::float8 as amount, token, mint, from_address as "from", to_address as "to",
           block_time::float8 as "blockTime", slot::float8 as slot, fee::float8 as fee, status, batch_id as "batchId"
    from transactions where batch_id = any(${batchIds as string[]}::text[])
    order by block_time, slot, signature, leg`;
}

/** The stretch of block times (after, until] whose sends of `address` the windowed large_transfer alerts read. */
export type SendRange = { address: string; after: number; until: number };

/**
 * The stored sends of each address in its range (successful, not to itself, any batch's), as
 * transactions in chain order, by address, each `judged` when its batch has been evaluated:
 * what the windowed large_transfer alerts sum (pipeline/send-windows.ts). One statement for all
 * of them, each address read through transactions_from_newest_idx.
 */
export async function loadStoredSends(sql: Sql, ranges: readonly SendRange[]): Promise<Map<string, StoredSend[]>> {
  const byAddress = new Map<string, StoredSend[]>();
  if (ranges.length === 0) return byAddress;
  const rows = await sql<StoredSend[]>`
    select t.signature, t.leg, t.type, t.amount::float8 as amount, t.token, t.mint, t.from_address as "from", t.to_address as "to",
           t.block_time::float8 as "blockTime", t.slot::float8 as slot, t.fee::float8 as fee, t.status,
           exists (select 1 from ingest_batches b where b.id = t.batch_id and b.evaluated_at is not null) as judged
    from unnest(${ranges.map((r) => r.address)}::text[], ${ranges.map((r) => r.after)}::bigint[], ${ranges.map((r) => r.until)}::bigint[])
      as w(address, after, until)
    cross join lateral (
      select * from transactions t
      where t.from_address = w.address and t.block_time > w.after and t.block_time <= w.until
    ) t
    where t.status = 'success' and t.to_address <> t.from_address
    order by t.from_address, t.block_time, t.slot, t.signature, t.leg`;
  for (const row of rows) {
    const list = byAddress.get(row.from);
    if (list) list.push(row);
    else byAddress.set(row.from, [row]);
  }
  return byAddress;
}

/** An active alert on one of the addresses: its rule, and what its notification needs. */
export type ActiveAlertRow = AlertRule & {
  /**
   * unusual_activity: created, resumed or given a new threshold, and not judged since
   * (alerts.activity_armed; absent: false). Re-checked under the alert's lock (record-events.ts).
   */
  activityArmed?: boolean;
  alias: string | null;
  channel: NotificationMethod;
  webhookUrl: string | null;
  recipient: string | null;
};

/** Active alerts (all callers) of the tracked wallets at these addresses; paused and disabled ones never fire. */
export async function loadActiveAlerts(sql: Sql, addresses: readonly string[]): Promise<ActiveAlertRow[]> {
  if (addresses.length === 0) return [];
  return selectActiveAlerts(sql, addresses);
}

/** What an evaluation knows of an active alert (`a` the alert, `w` its tracked wallet). */
const ACTIVE_ALERT_COLUMNS = `a.id as "alertId", a.wallet_id as "walletId", w.address, w.alias, a.condition,
  a.threshold::float8 as threshold, a.token, a.window_seconds as "windowSeconds",
  a.ignore_own_wallets as "ignoreOwnWallets", a.owner, a.baseline_score as "baselineScore", a.activity_armed as "activityArmed",
  a.notification_method as channel, a.webhook_url as "webhookUrl", a.recipient`;

/**
 * The active risk_score_increase alerts of `addresses`, read in an evaluation's writing
 * transaction once their scores are locked, rather than as loaded before: an alert created
 * meanwhile is among them. (Its creation reads the score under a share lock, insertAlert:
 * it either committed before these locks, from the score before, and is found here, or waits
 * for this commit and starts from the new score.) Loaded before, such an alert missed the
 * rise and then fired on the next rise of any size. Every active alert of the addresses: which
 * of the changes evaluated are an alert's own (made after its creation or last resume) is
 * decided under its lock (record-events.ts, judgeScoreChange).
 */
export async function loadScoreAlerts(tx: TransactionSql, addresses: readonly string[]): Promise<ActiveAlertRow[]> {
  if (addresses.length === 0) return [];
  // Wallet by wallet through alerts_wallet_idx (OFFSET 0 keeps the subquery from being joined
  // the other way round): planned on a table filled since its last analyze, a plain join read
  // every alert in every group that changed a score, the writing transaction's locks held
  // meanwhile (bench:latency, 100,000 alerts: detection p50 122 ms against 38 ms).
  return tx<ActiveAlertRow[]>`
    select ${tx.unsafe(ACTIVE_ALERT_COLUMNS)}
    from tracked_wallets w
    cross join lateral (
      select * from alerts a
      where a.wallet_id = w.id and a.status = 'active' and a.condition = 'risk_score_increase'
      offset 0
    ) a
    where w.address = any(${addresses as string[]}::text[])
    order by a.id`;
}

/** The active alerts of `addresses`, or of every address when none are given. */
function selectActiveAlerts(sql: Sql | TransactionSql, addresses?: readonly string[]) {
  return sql<ActiveAlertRow[]>`
    select ${sql.unsafe(ACTIVE_ALERT_COLUMNS)}
    from tracked_wallets w
    join alerts a on a.wallet_id = w.id
    where a.status = 'active' ${addresses ? sql`and w.address = any(${addresses as string[]}::text[])` : sql``}
    order by a.id`;
}

/** The version that the alert_rules_version triggers move forward on every relevant change. */
export async function alertRulesVersion(sql: Sql): Promise<number> {
  const [row] = await sql<{ version: number }[]>`select version::float8 as version from alert_rules_version`;
  return row?.version ?? 0;
}

/**
 * Every wallet that these callers track, as (owner, address): the "own" wallets of their
 * large_transfer alerts with ignoreOwnWallets (domain/conditions/own-wallets.ts), as tracked
 * now. Through tracked_wallets_owner_address_key; at most MAX_WALLETS_PER_CALLER per owner.
 */
export async function loadWalletsOfOwners(sql: Sql, owners: readonly string[]): Promise<Array<{ owner: string; address: string }>> {
  if (owners.length === 0) return [];
  return sql<Array<{ owner: string; address: string }>>`
    select owner, address from tracked_wallets where owner = any(${owners as string[]}::text[])`;
}

/** Those of the addresses that some caller tracks. */
export async function loadTrackedAmong(sql: Sql, addresses: readonly string[]): Promise<string[]> {
  if (addresses.length === 0) return [];
  const rows = await sql<{ address: string }[]>`
    select distinct address from tracked_wallets where address = any(${addresses as string[]}::text[])`;
  return rows.map((row) => row.address);
}

/** Every active alert and every tracked address with their version, read in one snapshot so that they agree. */
export async function loadAllActiveAlerts(sql: Sql): Promise<{ version: number; alerts: ActiveAlertRow[]; tracked: string[] }> {
  return sql.begin("isolation level repeatable read read only", async (tx) => {
    const [row] = await tx<{ version: number }[]>`select version::float8 as version from alert_rules_version`;
    const alerts = await selectActiveAlerts(tx);
    const tracked = await tx<{ address: string }[]>`select distinct address from tracked_wallets`;
    return { version: row?.version ?? 0, alerts: [...alerts], tracked: tracked.map((t) => t.address) };
  });
}

/** One list's label of an address (`source` null when it was loaded without one). */
export type LabelRow = { address: string; category: LabelCategory; score: number; source: string | null };

type StoredLabelRow = { address: string; category: LabelCategory; score: number; source: string };

/** Every label of an address, every source's: its effective label (risk-labels.ts, compareLabels) first. */
export type AddressLabels = { address: string; labels: LabelRow[] };

/** The labels of those of `addresses` that have any, one entry per address. */
export async function loadLabels(sql: Sql | TransactionSql, addresses: readonly string[]): Promise<AddressLabels[]> {
  if (addresses.length === 0) return [];
  const rows = await sql<StoredLabelRow[]>`
    select address, category, score, source from risk_labels where address = any(${addresses as string[]}::text[])`;
  const byAddress = new Map<string, StoredLabelRow[]>();
  for (const row of rows) {
    const list = byAddress.get(row.address);
    if (list) list.push(row);
    else byAddress.set(row.address, [row]);
  }
  // Ranked on the stored sources (compareLabels), then given out as the API gives them.
  return [...byAddress].map(([address, labels]) => ({ address, labels: (labels.length > 1 ? labels.sort(compareLabels) : labels).map(withApiSource) }));
}

export type AddressStateRow = { address: string; balance: number; riskScore: number; riskFactors: RiskFactor[] };

export async function loadAddressStates(sql: Sql, addresses: readonly string[]): Promise<AddressStateRow[]> {
  if (addresses.length === 0) return [];
  return sql<AddressStateRow[]>`
    select address, balance::float8 as balance, risk_score as "riskScore", risk_factors as "riskFactors"
    from address_state where address = any(${addresses as string[]}::text[])`;
}

export type ScoreChangeRow = ScoreChange & { evaluated: boolean };

export async function loadScoreChanges(sql: Sql, ids: readonly number[]): Promise<ScoreChangeRow[]> {
  if (ids.length === 0) return [];
  return sql<ScoreChangeRow[]>`
    select id::float8 as id, address, previous_score as "previousScore", score, factors,
           evaluated_at is not null as evaluated
    from risk_score_history where id = any(${ids as number[]}::bigint[])
    order by id`;
}
