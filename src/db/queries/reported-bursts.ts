// Which unusual_activity alerts have reported a burst already: for an armed alert's first
// judgment (created, resumed or given another threshold), which fires for the burst in progress
// only when the alert never reported it. Paused and resumed, or given a higher threshold, in the
// middle of a burst it had fired on, an alert paged that burst a second time.
import type { TransactionSql } from "postgres";

/** An armed firing to check: its alert, and the minute (Unix minutes) whose trailing hour it judged. */
export type BurstJudged = { alertId: string; minute: number };

/**
 * The alerts among `judged` with an event (sent or suppressed) on a transaction dated within an
 * hour of the minute judged, before or after it ([m−59, m+59]): the two trailing hours overlap,
 * so the burst judged is the one that event reported. Run under the alerts' locks, after other
 * evaluations' events have committed. Armed firings are rare (one judgment per create, resume or
 * threshold change), and an unusual_activity alert has one event per burst: each check reads the
 * alert's events and one transaction key per event.
 */
export async function alertsThatReportedBurst(tx: TransactionSql, judged: readonly BurstJudged[]): Promise<Set<string>> {
  if (judged.length === 0) return new Set();
  const rows = await tx<Array<{ alertId: string }>>`
    select j.alert_id as "alertId"
    from unnest(${judged.map((j) => j.alertId)}::text[], ${judged.map((j) => j.minute)}::bigint[]) as j(alert_id, minute)
    where exists (
      select 1 from alert_events e
      join transactions t on t.signature = e.transaction_signature
      where e.alert_id = j.alert_id
        and t.block_time >= (j.minute - 59) * 60 and t.block_time < (j.minute + 60) * 60)`;
  return new Set(rows.map((row) => row.alertId));
}
