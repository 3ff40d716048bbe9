// What the detection pipeline writes, all inside the one Postgres transaction that records an
// evaluation (events, notifications, scores and the "evaluated" marks commit together or not
// at all). Rows go in as column arrays through unnest: one statement per table per batch.
// Rows are locked in a fixed order (by key) so that concurrent evaluations cannot deadlock.
// The drizzle driver turns postgres.js's timestamp and numeric-array codecs into pass-through
// ones on the shared client, so dates go in as ISO text, come out as epoch milliseconds, and
// numeric arrays go in as text arrays cast per element.
import type { TransactionSql } from "postgres";
import type { ScoreChange } from "../../domain/conditions/index.ts";
import type { Condition, NotificationMethod, RiskFactor } from "../../domain/types.ts";
import type { Sql } from "../client.ts";
import type { JudgedSettings } from "../schema.ts";
import { openBatchesAmong } from "./pipeline.ts";

type Tx = TransactionSql;

export type ClaimedBatch = { id: string; transactionCount: number };

/** The advisory-lock namespace of batch claims (the second key is a hash of the batch id). */
const BATCH_CLAIM_LOCKS = 0x62617463; // "batc"

export type ClaimedGroup = {
  /** The batches claimed, oldest first: one unbroken run of the open batches. */
  batches: ClaimedBatch[];
  /** Open batches older than the run that other evaluations hold: counted before it, or it waits. */
  heldBefore: string[];
};

/** How many open batches, oldest first, a claim looks at. */
const CLAIM_WINDOW = 1000;

/**
 * Claims the oldest batches not evaluated yet that no other evaluation holds, as one unbroken
 * run in ingest order, up to about `maxTransactions` in all (the batch that crosses the limit
 * is still taken), with advisory locks held until the transaction ends. Batches that other
 * evaluations hold are passed over while no batch is taken yet (they are returned as
 * `heldBefore`), and end the run once one is: a run never straddles another evaluation's
 * batches, so runs can be counted one after another in ingest order. Two workers working off
 * a backlog each take full runs, one behind the other. Thus a backlog is evaluated in large
 * groups (fewer addresses to look up per transaction), while a quiet system evaluates each
 * batch alone as soon as it arrives. Empty when every open batch in the window is held.
 *
 * Advisory locks rather than FOR UPDATE: a row lock gives the transaction an xid for its whole
 * length, which holds back the pruning of every row updated meanwhile (address_state, on every
 * batch); an advisory lock does not.
 */
export async function claimBatchGroup(tx: Tx, maxTransactions: number): Promise<ClaimedGroup> {
  // The recursive walk visits the open batches one at a time in ingest order and tries each
  // one's lock only while the run may still grow, so no lock is taken beyond it.
  const walked = await tx<(ClaimedBatch & { taken: boolean })[]>`
    with recursive open as materialized (
      select id, transaction_count, row_number() over (order by created_at, id) as position
      from ingest_batches
      where evaluated_at is null
      order by created_at, id
      limit ${CLAIM_WINDOW}
    ), walk as (
      select 0::bigint as position, false as taken, 0::bigint as total, false as started
      union all
      select o.position, l.taken, w.total + case when l.taken then o.transaction_count else 0 end, w.started or l.taken
      from walk w
      join open o on o.position = w.position + 1
      cross join lateral (
        -- The same test as the WHERE below, so that no lock is tried for a row it then drops.
        select case when w.total < ${maxTransactions} and not (w.started and not w.taken)
                    then pg_try_advisory_xact_lock(${BATCH_CLAIM_LOCKS}, hashtext(o.id)) else false end as taken
      ) l
      where w.total < ${maxTransactions} and not (w.started and not w.taken)
    )
    select o.id, o.transaction_count as "transactionCount", w.taken
    from walk w join open o using (position)
    order by w.position`;
  const firstTaken = walked.findIndex((row) => row.taken);
  if (firstTaken < 0) return { batches: [], heldBefore: walked.map((row) => row.id) };
  const heldBefore = walked.slice(0, firstTaken).map((row) => row.id);
  const locked = walked.slice(firstTaken).filter((row) => row.taken);
  // Another evaluation may have committed one of them between our read and our lock.
  const stillOpen = new Set(await openBatchesAmong(tx, locked.map((b) => b.id)));
  return {
    batches: locked.filter((batch) => stillOpen.has(batch.id)).map(({ id, transactionCount }) => ({ id, transactionCount })),
    heldBefore,
  };
}

/** Whether another evaluation holds the batch's claim (tried in a transaction of its own, let go at once). */
export async function isBatchClaimed(sql: Sql, batchId: string): Promise<boolean> {
  const [row] = await sql.begin(
    (tx) => tx<{ free: boolean }[]>`select pg_try_advisory_xact_lock(${BATCH_CLAIM_LOCKS}, hashtext(${batchId})) as free`,
  );
  return !row!.free;
}

export async function markBatchesEvaluated(tx: Tx, batchIds: readonly string[], now: Date): Promise<void> {
  await tx`
    update ingest_batches set evaluated_at = ${now.toISOString()}::timestamptz
    where id = any(${batchIds as string[]}::text[])`;
}

/** `balance`: of its latest account snapshot (large_outflow's, for a tracking scored on its seeded counters). */
export type LockedScore = { address: string; riskScore: number; riskFactors: RiskFactor[]; balance: number };

export async function lockAddressScores(tx: Tx, addresses: readonly string[]): Promise<LockedScore[]> {
  if (addresses.length === 0) return [];
  return tx<LockedScore[]>`
    select address, risk_score as "riskScore", risk_factors as "riskFactors", balance::float8 as balance
    from address_state where address = any(${addresses as string[]}::text[])
    order by address for update`;
}

export type NewScore = { address: string; score: number; factors: readonly RiskFactor[] };

/** Sets score and factors (creating the row of an address never stored before). */
export async function writeScores(tx: Tx, rows: readonly NewScore[]): Promise<void> {
  if (rows.length === 0) return;
  const sorted = [...rows].sort((a, b) => (a.address < b.address ? -1 : a.address > b.address ? 1 : 0));
  await tx`
    insert into address_state (address, risk_score, risk_factors, updated_at)
    select address, score, string_to_array(factors, ','), now()
    from unnest(${sorted.map((r) => r.address)}::text[], ${sorted.map((r) => r.score)}::smallint[],
                ${sorted.map((r) => r.factors.join(","))}::text[]) as u(address, score, factors)
    on conflict (address) do update
      set risk_score = excluded.risk_score, risk_factors = excluded.risk_factors, updated_at = now()`;
}

export type NewHistory = {
  address: string;
  previousScore: number;
  score: number;
  factors: readonly RiskFactor[];
  /** What changed it: `batch:<id>`, `labels` or `tracking`. */
  cause: string;
};

/**
 * Appends score changes; returns their ids in the rows' order, which is also id order (an
 * address may change more than once in one call). `evaluatedAt` null = the risk job owes them
 * an evaluation.
 */
export async function insertScoreHistory(tx: Tx, rows: readonly NewHistory[], evaluatedAt: Date | null): Promise<number[]> {
  if (rows.length === 0) return [];
  // The ids are drawn as the rows are inserted, in ordinality order.
  const inserted = await tx<{ id: number }[]>`
    insert into risk_score_history (address, previous_score, score, factors, cause, evaluated_at)
    select address, previous_score, score, string_to_array(factors, ','), cause, ${evaluatedAt?.toISOString() ?? null}::timestamptz
    from unnest(${rows.map((r) => r.address)}::text[], ${rows.map((r) => r.previousScore)}::smallint[],
                ${rows.map((r) => r.score)}::smallint[], ${rows.map((r) => r.factors.join(","))}::text[],
                ${rows.map((r) => r.cause)}::text[])
         with ordinality as u(address, previous_score, score, factors, cause, n)
    order by n
    returning id::float8 as id`;
  return inserted.map((row) => row.id).sort((a, b) => a - b);
}

export async function markScoreChangesEvaluated(tx: Tx, ids: readonly number[], now: Date): Promise<void> {
  if (ids.length === 0) return;
  await tx`update risk_score_history set evaluated_at = ${now.toISOString()}::timestamptz where id = any(${ids as number[]}::bigint[])`;
}

/**
 * Locks the score changes of `addresses` still owed an evaluation (ids up to `throughId`, when
 * given) and returns them in id order. For one address, id order is the order the changes
 * were committed in: each was inserted while its writer held the address's address_state row.
 * A change being evaluated elsewhere is waited for, then left out (it is evaluated by then).
 */
export async function lockOpenScoreChanges(
  tx: Tx,
  addresses: readonly string[],
  throughId: number = Number.MAX_SAFE_INTEGER,
): Promise<ScoreChange[]> {
  if (addresses.length === 0) return [];
  return tx<ScoreChange[]>`
    select id::float8 as id, address, previous_score as "previousScore", score, factors
    from risk_score_history
    where evaluated_at is null and address = any(${addresses as string[]}::text[]) and id <= ${throughId}
    order by id for update`;
}

export type LockedAlert = {
  id: string;
  /** Its caller (the token's `sub`), whose notifications are counted together for delivery fairness. */
  owner: string;
  status: string;
  lastNotifiedAt: Date | null;
  baselineScore: number | null;
  /** risk_score_increase: the score changes up to this id are not the alert's (alerts.baseline_change_id). */
  baselineChangeId: number;
  /** unusual_activity: not judged since its create, resume or new threshold (alerts.activity_armed). */
  activityArmed: boolean;
  cooldownSeconds: number;
};

/** The alerts about to fire, locked: their status, cooldown and baseline as of now. */
export async function lockAlerts(tx: Tx, ids: readonly string[]): Promise<LockedAlert[]> {
  if (ids.length === 0) return [];
  const rows = await tx<Array<Omit<LockedAlert, "lastNotifiedAt"> & { lastNotifiedMs: number | null }>>`
    select id, owner, status, (extract(epoch from last_notified_at) * 1000)::float8 as "lastNotifiedMs",
           baseline_score as "baselineScore", baseline_change_id::float8 as "baselineChangeId",
           activity_armed as "activityArmed", cooldown_seconds as "cooldownSeconds"
    from alerts where id = any(${ids as string[]}::text[])
    order by id for update`;
  return rows.map(({ lastNotifiedMs, ...row }) => ({
    ...row,
    lastNotifiedAt: lastNotifiedMs === null ? null : new Date(lastNotifiedMs),
  }));
}

export type NewEvent = {
  id: string;
  alertId: string;
  dedupeKey: string;
  condition: Condition;
  observed: number;
  suppressed: boolean;
  transactionSignature: string | null;
  reason: string;
  /** The alert's settings the event was judged by (a later PATCH does not change them). */
  judged: JudgedSettings;
  /** The wallet's score and factors with the event: the notification's, or what it would have carried (suppressed). */
  riskScore: number;
  riskFactors: readonly RiskFactor[];
};

/**
 * Inserts events; one already recorded for (alert, dedupe key) is skipped. Returns the ids inserted.
 * The judged settings go in as three columns, built into their jsonb by the statement, and the
 * factors joined by commas (as writeScores takes them): arrays of scalars, still one statement.
 */
export async function insertEvents(tx: Tx, rows: readonly NewEvent[], now: Date): Promise<Set<string>> {
  if (rows.length === 0) return new Set();
  const col = <T>(pick: (row: NewEvent) => T) => rows.map(pick);
  const inserted = await tx<{ id: string }[]>`
    insert into alert_events (id, alert_id, dedupe_key, condition, observed, suppressed, transaction_signature, reason, created_at,
                              judged_settings, risk_score, risk_factors)
    select id, alert_id, dedupe_key, condition, observed::numeric, suppressed = 1, transaction_signature, reason,
           ${now.toISOString()}::timestamptz,
           jsonb_build_object('threshold', threshold, 'token', token, 'cooldownSeconds', cooldown_seconds),
           risk_score, string_to_array(risk_factors, ',')
    from unnest(${col((r) => r.id)}::text[], ${col((r) => r.alertId)}::text[], ${col((r) => r.dedupeKey)}::text[],
                ${col((r) => r.condition)}::text[], ${col((r) => String(r.observed))}::text[],
                ${col((r) => (r.suppressed ? 1 : 0))}::int[], ${col((r) => r.transactionSignature)}::text[],
                ${col((r) => r.reason)}::text[], ${col((r) => r.judged.threshold)}::text[], ${col((r) => r.judged.token)}::text[],
                ${col((r) => r.judged.cooldownSeconds)}::int[], ${col((r) => r.riskScore)}::smallint[],
                ${col((r) => r.riskFactors.join(","))}::text[])
         as u(id, alert_id, dedupe_key, condition, observed, suppressed, transaction_signature, reason,
              threshold, token, cooldown_seconds, risk_score, risk_factors)
    on conflict (alert_id, dedupe_key) do nothing
    returning id`;
  return new Set(inserted.map((row) => row.id));
}

export type NewNotification = {
  id: string;
  alertId: string;
  eventId: string;
  channel: NotificationMethod;
  destination: string;
  /** The NotificationPayload as JSON text. */
  payload: string;
};

export async function insertNotifications(tx: Tx, rows: readonly NewNotification[], now: Date): Promise<void> {
  if (rows.length === 0) return;
  const col = <T>(pick: (row: NewNotification) => T) => rows.map(pick);
  await tx`
    insert into notifications (id, alert_id, event_id, channel, destination, payload, status, created_at, updated_at)
    select id, alert_id, event_id, channel, destination, payload::jsonb, 'pending', ${now.toISOString()}::timestamptz, ${now.toISOString()}::timestamptz
    from unnest(${col((r) => r.id)}::text[], ${col((r) => r.alertId)}::text[], ${col((r) => r.eventId)}::text[],
                ${col((r) => r.channel)}::text[], ${col((r) => r.destination)}::text[], ${col((r) => r.payload)}::text[])
         as u(id, alert_id, event_id, channel, destination, payload)`;
}

/**
 * Clears the arming of unusual_activity alerts that an evaluation judged (locked by lockAlerts
 * first). Moves alert_rules_version forward (migration 0024), so the workers reload the mark.
 */
export async function disarmAlerts(tx: Tx, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await tx`update alerts set activity_armed = false where id = any(${ids as string[]}::text[]) and activity_armed`;
}

export type AlertFired = { id: string; lastNotifiedAt: Date | null; baselineScore: number | null };

/** Records each fired alert's last notification and (risk_score_increase) its new baseline. */
export async function updateFiredAlerts(tx: Tx, rows: readonly AlertFired[]): Promise<void> {
  if (rows.length === 0) return;
  const ids = rows.map((r) => r.id);
  // "a.id = any(ids)" lets the planner fetch the fired alerts by key; with the join on
  // unnest alone it hashed the whole alerts table for every group (10.5 → 3.9 ms for 350
  // of 20,000 alerts).
  await tx`
    update alerts a
    set last_notified_at = coalesce(u.notified::timestamptz, a.last_notified_at),
        baseline_score = coalesce(u.baseline, a.baseline_score)
    from unnest(${ids}::text[],
                ${rows.map((r) => r.lastNotifiedAt?.toISOString() ?? null)}::text[],
                ${rows.map((r) => r.baselineScore)}::smallint[]) as u(id, notified, baseline)
    where a.id = u.id and a.id = any(${ids}::text[])`;
}
