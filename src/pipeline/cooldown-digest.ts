// The cooldown digest: a cooldown keeps its events from being sent (DESIGN.md section 4), and
// the digest tells the recipient afterwards what it held back. One per alert and cooldown window
// that held back an event: made, pending, in the transaction that records the window's first
// suppressed event, due when the cooldown ends (next_attempt_at), and built at its first attempt
// from the window's suppressed events (settleDigestPayload), then stored, so that every retry
// sends the same body under the same webhook-id. Until 2026-11-28 nothing ever mentioned them: a
// 150 SOL transfer was sent, the 1,000,000 and 250,000 SOL ones in its cooldown were not, and the
// next message spoke of 101 SOL.
//
// Words: the window is the cooldown a sent notification started: from that notification's
// time (the alert's last_notified_at) to that time plus the alert's cooldownSeconds as the
// digest was made. cooldown_digests holds one row per (alert, window start, window end): replays
// and concurrent evaluations find it taken and make none. A cooldown lengthened by a PATCH
// mid-window gives the later events a window end of their own, hence a second digest for them
// alone; a shortened one ends the window at the next notification sent.
import type { TransactionSql } from "postgres";
import type { Sql } from "../db/client.ts";
import type { ActiveAlertRow } from "../db/queries/pipeline.ts";
import { asDate } from "../db/queries/notifications.ts";
import { namedHeldBack, namesEachToken } from "../domain/held-back-by-token.ts";
import type { Condition, DigestCounterparty, HeldBackFiring, NotificationPayload, SuppressedSummary } from "../domain/types.ts";
import { newId } from "../ids.ts";
import { digestReason } from "../notify/render-digest.ts";
import { strongestCounterparty } from "./digest-counterparty.ts";
import { alertData, destinationOf, type WalletRisk } from "./notification.ts";

/** The most event ids a digest lists (its count says how many there were; the events API lists them all). */
export const SUPPRESSED_EVENT_IDS_SHOWN = 100;

/** An event this evaluation suppressed: its alert, and the cooldown window it fell in. */
export type HeldBack = { alert: ActiveAlertRow; owner: string; windowStart: Date; cooldownSeconds: number; risk: WalletRisk };

/** notBefore: the cooldown's end, when the digest falls due (its job waits in BullMQ's delayed set until then). */
export type DigestDelivery = { notificationId: string; channel: ActiveAlertRow["channel"]; owner: string; notBefore: Date };

/**
 * Makes the digest of each window that holds one of these events, unless it is made already.
 * Inside the evaluation's transaction, after its events are inserted: only events that were
 * inserted (not a replay's) are passed. Returns the digests made, for their delivery jobs.
 */
export async function insertCooldownDigests(tx: TransactionSql, heldBack: readonly HeldBack[], now: Date): Promise<DigestDelivery[]> {
  const windows = new Map<string, HeldBack & { windowEnd: Date }>();
  for (const held of heldBack) {
    const windowEnd = new Date(held.windowStart.getTime() + held.cooldownSeconds * 1000);
    windows.set(`${held.alert.alertId} ${held.windowStart.getTime()} ${windowEnd.getTime()}`, { ...held, windowEnd });
  }
  const rows = [...windows.values()].flatMap((held) => {
    const destination = destinationOf(held.alert);
    if (destination === null) return []; // nowhere to send it (as for its events' notifications)
    return [{ id: newId("ntf", now.getTime()), held, destination }];
  });
  if (rows.length === 0) return [];
  const input = JSON.stringify(
    rows.map(({ id, held, destination }) => ({
      id,
      alert_id: held.alert.alertId,
      window_start: held.windowStart.toISOString(),
      window_end: held.windowEnd.toISOString(),
      channel: held.alert.channel,
      destination,
      payload: unbuiltPayload(held.alert, held.risk, now),
    })),
  );
  // The window's row first, the notification only for a window this statement claimed: a
  // digest made already (a replay, a retry, a concurrent evaluation that committed first) makes
  // none. Both are checked as one statement, so the key can point at the notification.
  const made = await tx<{ id: string }[]>`
    with input as (
      select * from jsonb_to_recordset(${input}::text::jsonb) as t(
        id text, alert_id text, window_start timestamptz, window_end timestamptz, channel text, destination text, payload jsonb)
    ), claimed as (
      insert into cooldown_digests (alert_id, window_start, window_end, notification_id)
      select alert_id, window_start, window_end, id from input
      on conflict do nothing
      returning notification_id
    )
    insert into notifications (id, alert_id, event_id, channel, destination, payload, status, next_attempt_at, created_at, updated_at)
    select i.id, i.alert_id, null, i.channel, i.destination, i.payload, 'pending', i.window_end,
           ${now.toISOString()}::timestamptz, ${now.toISOString()}::timestamptz
    from input i join claimed c on c.notification_id = i.id
    returning id`;
  const madeIds = new Set(made.map((row) => row.id));
  return rows
    .filter((row) => madeIds.has(row.id))
    .map(({ id, held }) => ({ notificationId: id, channel: held.alert.channel, owner: held.owner, notBefore: held.windowEnd }));
}

/** What a digest holds until its first attempt: the alert and wallet, and no summary yet. */
function unbuiltPayload(alert: ActiveAlertRow, risk: WalletRisk, now: Date): NotificationPayload {
  return {
    type: "risk_alert.suppressed",
    timestamp: now.toISOString(),
    data: {
      ...alertData(alert, risk),
      observed: null,
      reason: "",
    },
  };
}

type Summary = { count: number; firstAt: Date | string; lastAt: Date | string; eventIds: string[]; windowStart: Date | string; windowEnd: Date | string };
type Strongest = {
  eventId: string;
  observed: number;
  reason: string;
  transactionSignature: string | null;
  createdAt: string;
  riskScore: number | null;
  riskFactors: string[] | null;
};
/** A large_transfer's largest held-back firing of one token as its legs name it (mint, or token when none) and direction. */
type TokenBest = Strongest & { sent: boolean; token: string | null; mint: string | null; firstAt: string };

/**
 * The digest's payload as its attempts send it: built from the window's suppressed events at
 * the first attempt and stored, or as stored by an earlier one. Undefined when the digest is
 * gone (its alert deleted). `now` is the body's timestamp: when the digest was made into a message.
 */
export async function settleDigestPayload(sql: Sql, notificationId: string, unbuilt: NotificationPayload, now: Date): Promise<NotificationPayload | undefined> {
  const held = await heldBackEvents(sql, notificationId, unbuilt.data);
  if (held === undefined) return undefined;
  // The score as of the firing it names (README: riskScore "as of the firing"), as its event
  // stored it, not the address's now: a counterparty delisted before the cooldown ended made a
  // transfer sent at 90 read 0. An event recorded before it stored one (migration 0028) leaves
  // the score the digest was made with, the window's first held-back event's at its firing.
  const counterparty = held.summary ? await strongestCounterparty(sql, unbuilt.data, held.summary.strongest) : undefined;
  const payload = digestPayload(unbuilt, held.summary, held.strongestRisk, now, counterparty);
  // Stored once: a second run racing this one (a stalled job run twice) keeps the first's body.
  const [stored] = await sql<{ payload: NotificationPayload | string }[]>`
    update notifications set payload = ${JSON.stringify(payload)}::jsonb
    where id = ${notificationId} and payload->'data'->'suppressed' is null
    returning payload`;
  const [kept] = stored ? [stored] : await sql<{ payload: NotificationPayload | string }[]>`select payload from notifications where id = ${notificationId}`;
  if (!kept) return undefined;
  return typeof kept.payload === "string" ? (JSON.parse(kept.payload) as NotificationPayload) : kept.payload;
}

/** The pure part: the unbuilt payload with what the window held back, and the strongest's other side when it names one. */
export function digestPayload(
  unbuilt: NotificationPayload,
  summary: SuppressedSummary | undefined,
  risk: { riskScore: number; riskFactors: string[] } | undefined,
  now: Date,
  counterparty?: DigestCounterparty,
): NotificationPayload {
  const data = { ...unbuilt.data, ...(risk ? { riskScore: risk.riskScore, riskFactors: [...risk.riskFactors] } : {}) };
  if (!summary) {
    // Nothing in the window (it cannot be: the digest is made by a suppressed event of it); said as such.
    return { ...unbuilt, timestamp: now.toISOString(), data: { ...data, reason: "No firing was held back during the cooldown." } };
  }
  return {
    type: "risk_alert.suppressed",
    timestamp: now.toISOString(),
    data: {
      ...data,
      observed: summary.strongest.observed,
      reason: digestReason(data.condition, summary),
      suppressed: counterparty ? { ...summary, strongest: { ...summary.strongest, counterparty } } : summary,
    },
  };
}

/**
 * The window's suppressed events: from its start (or the end of an earlier digest of the same
 * start, whose cooldown was lengthened since) to its end, or to the next notification sent, if a
 * shortened cooldown let one out earlier. The strongest is the highest observed value; for
 * risk_score_increase the highest score reached (a rise is measured from a baseline each firing
 * moves, so the largest rise need not be the worst score), the first among equals.
 *
 * An untokened large_transfer's amounts are of different tokens, so its events are ranked per
 * token (domain/held-back-by-token.ts), and the strongest is the first named; one with a token
 * filter is ranked as above, its amounts all of its token, and its events are never matched to
 * legs (a USDC alert's 5,000 USDC receipt was filed under the BONK of the same transaction). An
 * event stores neither its token nor its direction: its reason begins with the direction ("Sent
 * …", "Received …", a transaction of several tokens' legs with its preferred leg's), and its
 * token is that of the wallet's legs of its transaction, in that direction, whose total (what
 * the evaluation judged: domain/conditions/large-transfer.ts legTotals) is nearest its observed
 * value, the first leg among equals. The reason's token is no key: it names a mint by 4…4
 * characters. Per token and direction only the largest event leaves the database.
 */
async function heldBackEvents(
  sql: Sql,
  notificationId: string,
  alert: { address: string; condition: Condition },
): Promise<{ summary: SuppressedSummary | undefined; strongestRisk?: { riskScore: number; riskFactors: string[] } } | undefined> {
  // The alert's token filter (a PATCH cannot change it), which decides how its events are named.
  const [digest] = await sql<{ token: string | null }[]>`
    select a.token from cooldown_digests d join alerts a on a.id = d.alert_id where d.notification_id = ${notificationId}`;
  if (!digest) return undefined;
  const named = { condition: alert.condition, token: digest.token };
  const rows = await sql<Array<Summary & { strongest: Strongest | null; tokenBests: TokenBest[] }>>`
    with d as (
      select alert_id, window_start, window_end from cooldown_digests where notification_id = ${notificationId}
    ), bounds as (
      select d.alert_id, d.window_start, d.window_end,
             coalesce((select max(o.window_end) from cooldown_digests o
                       where o.alert_id = d.alert_id and o.window_start = d.window_start and o.window_end < d.window_end), d.window_start) as since,
             least(d.window_end, coalesce((
               select min(e.created_at) from alert_events e
               where e.alert_id = d.alert_id and not e.suppressed and e.created_at > d.window_start
                 and exists (select 1 from notifications n where n.event_id = e.id)), 'infinity')) as until
      from d
    ), held as (
      select e.id, e.observed::float8 as observed, e.observed as exact_observed, e.reason, e.transaction_signature, e.created_at, e.risk_score, e.risk_factors,
             case when e.condition = 'risk_score_increase' and e.dedupe_key like 'score:%'
                  then (select h.score::float8 from risk_score_history h where h.id = substring(e.dedupe_key from 7)::bigint)
             end as score
      from alert_events e, bounds b
      where e.alert_id = b.alert_id and e.suppressed and e.created_at >= b.since and e.created_at < b.until
    ), said as (
      select h.*, case when h.reason like 'Sent %' then true when h.reason like 'Received %' then false end as said_sent
      from held h
      where ${namesEachToken(named)}::boolean
    ), token_legs as (
      select s.*, coalesce(leg.sent, s.said_sent, false) as sent, leg.token, leg.mint,
             coalesce(leg.identity, 'event:' || s.id) as identity
      from said s
      left join lateral (
        select l.sent, l.token, l.mint, l.identity
        from (
          select t.from_address = ${alert.address} as sent, coalesce('mint:' || t.mint, 'token:' || lower(t.token)) as identity,
                 min(t.token) as token, min(t.mint) as mint, sum(t.amount) as total, min(t.leg) as first_leg
          from transactions t
          where t.signature = s.transaction_signature and (t.from_address = ${alert.address}) <> (t.to_address = ${alert.address})
          group by 1, 2
        ) l
        where s.said_sent is null or l.sent = s.said_sent
        order by abs(l.total - s.exact_observed), l.first_leg
        limit 1
      ) leg on true
    ), token_bests as (
      select distinct on (sent, identity) *, min(created_at) over (partition by sent, identity) as first_at
      from token_legs
      order by sent, identity, observed desc, created_at, id
    )
    select b.window_start as "windowStart", b.window_end as "windowEnd",
           (select count(*)::int from held) as count,
           (select min(created_at) from held) as "firstAt",
           (select max(created_at) from held) as "lastAt",
           coalesce((select (array_agg(id order by created_at, id))[1:${SUPPRESSED_EVENT_IDS_SHOWN}::int] from held), '{}') as "eventIds",
           (select jsonb_build_object('eventId', id, 'observed', observed, 'reason', reason,
                                      'transactionSignature', transaction_signature, 'createdAt', created_at,
                                      'riskScore', risk_score, 'riskFactors', risk_factors)
            from held order by coalesce(score, observed) desc, created_at, id limit 1) as strongest,
           coalesce((select jsonb_agg(jsonb_build_object('eventId', id, 'observed', observed, 'reason', reason,
                                                         'transactionSignature', transaction_signature, 'createdAt', created_at,
                                                         'riskScore', risk_score, 'riskFactors', risk_factors,
                                                         'sent', sent, 'token', token, 'mint', mint, 'firstAt', first_at))
                     from token_bests), '[]') as "tokenBests"
    from bounds b`;
  const [row] = rows;
  if (!row) return undefined;
  if (row.count === 0 || !row.strongest) return { summary: undefined };
  const iso = (value: Date | string) => asDate(value).toISOString();
  const { strongest, byToken } = namedHeldBack(named, row.strongest, row.tokenBests.map(tokenFiring));
  const firing = (held: Strongest): HeldBackFiring => ({
    eventId: held.eventId,
    observed: held.observed,
    reason: held.reason,
    transactionSignature: held.transactionSignature,
    createdAt: iso(held.createdAt),
  });
  const summary: SuppressedSummary = {
    count: row.count,
    windowStart: iso(row.windowStart),
    windowEnd: iso(row.windowEnd),
    firstAt: iso(row.firstAt),
    lastAt: iso(row.lastAt),
    strongest: firing(strongest),
    eventIds: row.eventIds,
    ...(byToken && {
      largestByToken: byToken.named.map((held) => ({ ...firing(held), direction: held.sent ? ("sent" as const) : ("received" as const) })),
      otherTokens: byToken.otherTokens,
    }),
  };
  const stored = strongest.riskScore === null ? undefined : { riskScore: strongest.riskScore, riskFactors: strongest.riskFactors ?? [] };
  return { summary, ...(stored ? { strongestRisk: stored } : {}) };
}

/** A token's and direction's largest held-back event, as held-back-by-token.ts compares them. */
function tokenFiring(best: TokenBest) {
  return {
    ...best,
    token: best.token === null ? null : { token: best.token, mint: best.mint },
    createdAt: asDate(best.createdAt).toISOString(),
    firstAt: asDate(best.firstAt).toISOString(),
  };
}
