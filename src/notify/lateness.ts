// How late a notification goes out, one rule for every channel that says so: the SMS ("Risk
// alert (3h ago) on …") and the email (its subject and first line). An email's Date header is
// when it was sent, so one delivered hours after an outage sat at the top of the inbox as if
// fresh. Pure: the attempt's time is handed in.
import type { NotificationPayload } from "../domain/types.ts";

/** Sent later than this after what it reports, a notification says how much later. */
const LATE_AFTER_MS = 10 * 60_000;

/**
 * When what the notification reports happened, in epoch ms: a transaction's block time, for
 * the payload's timestamp is when its batch was evaluated, which after an outage or a backlog
 * is hours later (a transfer at 06:00 evaluated at 12:00 must not read as happening now). A
 * block time after the timestamp (a skewed clock) gives way to the timestamp. Without a
 * transaction (a score change, a test) the timestamp is the event's own time.
 */
export function happenedAt(payload: NotificationPayload): number {
  const stamped = Date.parse(payload.timestamp);
  const blockTime = payload.data.transaction?.blockTime;
  if (typeof blockTime !== "number" || !Number.isFinite(blockTime)) return stamped;
  return Number.isNaN(stamped) ? blockTime * 1000 : Math.min(stamped, blockTime * 1000);
}

/**
 * "3h" when the attempt is more than LATE_AFTER_MS after what the payload reports happened
 * ("25 min", "3h", "2d"), otherwise undefined (on time, no attempt time, or a time that does
 * not parse). Relative rather than a clock time: the phone and the mail client stamp the message
 * with about the time it is sent, so "3h ago" counts back from a time the reader sees, in no
 * time zone to convert.
 */
export function lateBy(payload: NotificationPayload, attemptAt: Date | undefined): string | undefined {
  if (attemptAt === undefined) return undefined;
  const lateMs = attemptAt.getTime() - happenedAt(payload);
  if (!(lateMs > LATE_AFTER_MS)) return undefined;
  const minutes = Math.floor(lateMs / 60_000);
  const hours = Math.floor(minutes / 60);
  return hours < 1 ? `${minutes} min` : hours < 48 ? `${hours}h` : `${Math.floor(hours / 24)}d`;
}

/** " (3h ago)" after "Risk alert" (the SMS's head, the email's subject), or "" when on time. */
export function lateNote(payload: NotificationPayload, attemptAt: Date | undefined): string {
  const late = lateBy(payload, attemptAt);
  return late === undefined ? "" : ` (${late} ago)`;
}
