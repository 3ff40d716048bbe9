// The carrier's verdict on an SMS, from Twilio's status callbacks, kept on the notification
// whose message Twilio names by its sid. Twilio sends each status on its own request, so they
// arrive in any order (a `sent` can come after the `delivered`): a status replaces only one
// that comes before it in a message's life, and a verdict is never replaced.
//
// A callback can also come before its sid is on any notification: the worker writes the sid
// with the attempt, after Twilio's answer, and Twilio does not retry a callback. Such a status
// is kept in early_carrier_statuses (merged by the same rule, one row per sid) and applied when
// the attempt is recorded. Neither side can miss the other under READ COMMITTED, because each
// writes first, commits, and only then looks for the other in a statement of its own (whose
// snapshot is taken after its own commit):
//   callback: keep the row (commit) → claim rows of the sid if a notification has it
//   worker:   record the sid (commit) → claim rows of its sids
// If the callback's claim does not see the sid, its snapshot came before the worker's commit,
// so the worker's claim, which starts after that commit, starts after the row's commit and
// sees the row; and the other way round. Both may see both: the claim is a DELETE … RETURNING,
// so the row lock lets one of them apply a row and the other finds it gone.
import type postgres from "postgres";
import type { Sql } from "../client.ts";

/** Twilio's MessageStatus values of an outbound message on its way, in the order it passes them. */
export const CARRIER_PROGRESS = ["accepted", "scheduled", "queued", "sending", "sent"] as const;

/**
 * The statuses that end a message's life: the carrier's last word. `read` (WhatsApp) and
 * `partially_delivered` are not an SMS's, but Twilio's list has them.
 */
export const CARRIER_VERDICTS = ["delivered", "undelivered", "failed", "canceled", "partially_delivered", "read"] as const;

export type CarrierStatus = (typeof CARRIER_PROGRESS)[number] | (typeof CARRIER_VERDICTS)[number];

const KNOWN: ReadonlySet<string> = new Set<string>([...CARRIER_PROGRESS, ...CARRIER_VERDICTS]);

/** Whether this service knows the status (an inbound one, `received`, or a value Twilio adds later, is not recorded). */
export const isCarrierStatus = (status: string): status is CarrierStatus => KNOWN.has(status);

export const isCarrierVerdict = (status: CarrierStatus): boolean => (CARRIER_VERDICTS as readonly string[]).includes(status);

/**
 * How long a status of a sid that no notification has is kept. The window it waits for is the
 * worker's, between Twilio's answer and the commit of the batch that records it: milliseconds,
 * seconds under load. A sid still unclaimed after an hour never will be (a message of another
 * service on the account, a replay, the copy of an SMS whose attempt could not be recorded and
 * was sent again under a new sid), and the early callbacks delete such rows as they come: the
 * table holds at most an hour of them, and needs no job of its own.
 */
export const EARLY_STATUS_TTL_MS = 60 * 60 * 1000;

const PROGRESS = [...CARRIER_PROGRESS];
const VERDICTS = [...CARRIER_VERDICTS];

/** SQL: where a status stands in a message's life, every verdict after all progress (a status not known ranks first). */
const rank = (sql: Sql, status: postgres.Fragment) =>
  sql`(case when ${status} = any(${VERDICTS}::text[]) then ${PROGRESS.length}::int
            else coalesce(array_position(${PROGRESS}::text[], ${status}) - 1, 0) end)`;

/**
 * SQL: whether a message showing `current` (null: nothing yet) moves on to `next`. The one rule
 * for a notification and a kept row alike, so that a status applied late lands where it would
 * have on time. An equal status replaces (the later callback's time and error code).
 */
const movesOn = (sql: Sql, current: postgres.Fragment, next: postgres.Fragment) =>
  sql`(${current} is null or (${current} <> all(${VERDICTS}::text[]) and ${rank(sql, current)} <= ${rank(sql, next)}))`;

export type CarrierReport = { messageSid: string; status: CarrierStatus; errorCode: number | null; at: Date };

/**
 * outcome: recorded, the notification now shows a status this call brought; superseded, it
 * already showed a later one (or a verdict); kept, no notification has the sid yet, and the
 * status waits for the attempt that brings it (or expires). recorded: the status the
 * notification shows because of this call (with a kept row claimed, the merged one's).
 */
export type CarrierRecordResult = { outcome: "recorded" | "superseded" | "kept"; recorded: CarrierStatus | null };

/** Records a callback's status on the notification of its message, or keeps it until that has its sid. */
export async function recordCarrierStatus(sql: Sql, report: CarrierReport): Promise<CarrierRecordResult> {
  const direct = await recordOnNotification(sql, report);
  if (direct !== "unknown") return { outcome: direct, recorded: direct === "recorded" ? report.status : null };
  // Not a transaction: the claim must take its snapshot after the kept row has committed.
  await keepEarly(sql, report);
  const [claim] = await claimEarlyCarrierStatuses(sql, [report.messageSid]);
  if (!claim) return { outcome: "kept", recorded: null };
  return claim.moved ? { outcome: "recorded", recorded: claim.status } : { outcome: "superseded", recorded: null };
}

/**
 * One statement: two callbacks of one message racing each other are ordered by the row lock,
 * and the second is judged against what the first wrote (an UPDATE rechecks its condition on
 * the row it waited for).
 */
async function recordOnNotification(sql: Sql, report: CarrierReport): Promise<"recorded" | "superseded" | "unknown"> {
  const [row] = await sql<{ known: number; moved: number }[]>`
    with target as (
      select id from notifications where provider_message_id = ${report.messageSid}
    ), moved as (
      update notifications n
      set carrier_status = ${report.status}, carrier_error_code = ${report.errorCode}::int,
          carrier_updated_at = ${report.at.toISOString()}::timestamptz
      from target
      where n.id = target.id and ${movesOn(sql, sql`n.carrier_status`, sql`${report.status}::text`)}
      returning n.id
    )
    select (select count(*) from target)::int as known, (select count(*) from moved)::int as moved`;
  if (!row || row.known === 0) return "unknown";
  return row.moved > 0 ? "recorded" : "superseded";
}

/**
 * Keeps a status of a sid no notification has, merged into what came before for it (the PK's
 * conflict orders racing callbacks of one sid), after deleting the other sids' rows past
 * EARLY_STATUS_TTL_MS. Two statements, and the delete skips rows another session holds: in
 * one statement, two callbacks each deleting the other's expired row before upserting their
 * own locked the two rows in opposite orders, and Postgres ended one with a deadlock (a 500
 * that Twilio does not retry). A delete that never waits cannot close a circle.
 */
async function keepEarly(sql: Sql, report: CarrierReport): Promise<void> {
  const expiredBefore = new Date(report.at.getTime() - EARLY_STATUS_TTL_MS);
  await sql`
    delete from early_carrier_statuses
    where message_sid in (
      select message_sid from early_carrier_statuses
      where received_at < ${expiredBefore.toISOString()}::timestamptz and message_sid <> ${report.messageSid}
      for update skip locked)`;
  await sql`
    insert into early_carrier_statuses as e (message_sid, status, error_code, received_at)
    values (${report.messageSid}, ${report.status}, ${report.errorCode}::int, ${report.at.toISOString()}::timestamptz)
    on conflict (message_sid) do update
    set status = excluded.status, error_code = excluded.error_code, received_at = excluded.received_at
    where ${movesOn(sql, sql`e.status`, sql`excluded.status`)}`;
}

export type EarlyStatusClaim = { messageSid: string; status: CarrierStatus; moved: boolean };

/**
 * Applies the kept statuses of these sids to the notifications that carry them now, and
 * deletes those rows; a sid no notification has yet keeps its row. `moved`: a notification
 * took the status (false: it showed a later one). Call it with the pool, after the write
 * that gives the other side its chance to see this one has committed (see the top of the
 * file); inside a transaction with that write, it may miss a row kept meanwhile.
 */
export async function claimEarlyCarrierStatuses(sql: Sql, messageSids: readonly string[]): Promise<EarlyStatusClaim[]> {
  return sql<EarlyStatusClaim[]>`
    with claimed as (
      delete from early_carrier_statuses e
      where e.message_sid = any(${messageSids as string[]}::text[])
        and exists (select from notifications n where n.provider_message_id = e.message_sid)
      returning e.message_sid, e.status, e.error_code, e.received_at
    ), moved as (
      update notifications n
      set carrier_status = c.status, carrier_error_code = c.error_code, carrier_updated_at = c.received_at
      from claimed c
      where n.provider_message_id = c.message_sid and ${movesOn(sql, sql`n.carrier_status`, sql`c.status`)}
      returning c.message_sid
    )
    select c.message_sid as "messageSid", c.status, exists (select from moved m where m.message_sid = c.message_sid) as moved
    from claimed c`;
}
