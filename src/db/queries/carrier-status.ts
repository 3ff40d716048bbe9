// The carrier's verdict on an SMS, from Twilio's status callbacks, kept on the notification
// whose message Twilio names by its sid. Twilio sends each status on its own request, so they
// arrive in any order (a `sent` can come after the `delivered`): a status replaces only one
// that comes before it in a message's life, and a verdict is never replaced.
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

/** Where a status stands in a message's life: every verdict after all progress. */
const rankOf = (status: CarrierStatus): number =>
  isCarrierVerdict(status) ? CARRIER_PROGRESS.length : (CARRIER_PROGRESS as readonly string[]).indexOf(status);

export type CarrierReport = { messageSid: string; status: CarrierStatus; errorCode: number | null; at: Date };

/**
 * recorded: the notification now shows this status; superseded: it already shows a later one (or
 * a verdict); unknown: no notification has this sid.
 */
export type CarrierRecordResult = "recorded" | "superseded" | "unknown";

/**
 * Records a callback's status on the notification of its message. One statement: two callbacks
 * of one message racing each other are ordered by the row lock, and the second is judged against
 * what the first wrote (an UPDATE rechecks its condition on the row it waited for).
 */
export async function recordCarrierStatus(sql: Sql, report: CarrierReport): Promise<CarrierRecordResult> {
  const [row] = await sql<{ known: number; moved: number }[]>`
    with target as (
      select id from notifications where provider_message_id = ${report.messageSid}
    ), moved as (
      update notifications n
      set carrier_status = ${report.status}, carrier_error_code = ${report.errorCode}::int,
          carrier_updated_at = ${report.at.toISOString()}::timestamptz
      from target
      where n.id = target.id
        and (n.carrier_status is null
             or (n.carrier_status <> all(${[...CARRIER_VERDICTS]}::text[])
                 and coalesce(array_position(${[...CARRIER_PROGRESS]}::text[], n.carrier_status) - 1, 0) <= ${rankOf(report.status)}))
      returning n.id
    )
    select (select count(*) from target)::int as known, (select count(*) from moved)::int as moved`;
  if (!row || row.known === 0) return "unknown";
  return row.moved > 0 ? "recorded" : "superseded";
}
