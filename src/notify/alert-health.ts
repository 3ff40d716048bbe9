// Alert health: an alert whose notifications keep failing is disabled rather than left to
// fail forever (DESIGN.md section 6). The rules:
// - the first permanent failure (a refusal, or retries exhausted) sets alerts.failing_since;
// - any delivery clears it (recordAttempt does that in the same statement);
// - a permanent failure when failing_since is 24 h old or more disables the alert;
// - a 410 Gone from a webhook receiver disables it at once;
// - the owner is told by email when we know an address for them: the recipient of an
//   email alert. Tokens' email claims are not stored, so for webhook and SMS alerts the
//   disabling is logged (warn) and shown on the alert (status, disabledReason).
// A PATCH of status back to active clears failing_since and disabled_reason (alerts route).
import type { Sql } from "../db/client.ts";
import type { Condition } from "../domain/types.ts";
import type { Logger } from "../logger.ts";
import type { EmailChannel } from "./channels/index.ts";
import { renderDisabledNotice, walletName } from "./render.ts";

export const FAILING_DISABLES_AFTER_MS = 24 * 3_600_000;

export type FailureFacts = {
  alertId: string;
  /** The receiver answered 410 Gone. */
  gone: boolean;
  /** The last attempt's error, for the log. */
  error: string;
  now: Date;
};

type DisabledAlert = {
  alertId: string;
  owner: string;
  condition: Condition;
  notificationMethod: string;
  recipient: string | null;
  address: string;
  alias: string | null;
  disabledReason: string;
};

export type AlertHealthDeps = { sql: Sql; logger: Logger; email: EmailChannel };

/** Records a permanent failure against the alert; disables it (and tells the owner) when the rules say so. */
export async function recordPermanentFailure(deps: AlertHealthDeps, facts: FailureFacts): Promise<boolean> {
  const disabled = await markFailing(deps.sql, facts);
  if (!disabled) return false;
  deps.logger.warn(
    { alertId: disabled.alertId, owner: disabled.owner, reason: disabled.disabledReason, lastError: facts.error },
    "alert disabled: its notifications keep failing",
  );
  await tellOwner(deps, disabled);
  return true;
}

/**
 * One statement: start (or keep) the failure run and disable the alert if it is due.
 * Returns the alert only when this call disabled it, so the owner is told once.
 */
async function markFailing(sql: Sql, facts: FailureFacts): Promise<DisabledAlert | undefined> {
  const now = facts.now.toISOString();
  const cutoff = new Date(facts.now.getTime() - FAILING_DISABLES_AFTER_MS).toISOString();
  const [row] = await sql<(DisabledAlert & { disabledNow: boolean })[]>`
    with before as (
      select id, status, coalesce(failing_since, ${now}::timestamptz) as since
      from alerts where id = ${facts.alertId} for update
    ), verdict as (
      select id, since, status <> 'disabled' and (${facts.gone}::boolean or since <= ${cutoff}::timestamptz) as disable
      from before
    )
    update alerts a
    set failing_since = verdict.since,
        status = case when verdict.disable then 'disabled' else a.status end,
        disabled_reason = case
          when not verdict.disable then a.disabled_reason
          when ${facts.gone}::boolean then 'the webhook endpoint answered 410 Gone'
          else 'every notification since ' || to_char(verdict.since at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') ||
               ' failed (24 hours of failures)'
        end,
        updated_at = ${now}::timestamptz
    from verdict, tracked_wallets w
    where a.id = verdict.id and w.id = a.wallet_id
    returning a.id as "alertId", a.owner, a.condition, a.notification_method as "notificationMethod", a.recipient,
              w.address, w.alias, a.disabled_reason as "disabledReason", verdict.disable as "disabledNow"`;
  return row?.disabledNow ? row : undefined;
}

async function tellOwner(deps: AlertHealthDeps, alert: DisabledAlert): Promise<void> {
  if (alert.notificationMethod !== "email" || !alert.recipient) {
    deps.logger.warn({ alertId: alert.alertId, owner: alert.owner }, "alert disabled; no email address known for its owner");
    return;
  }
  const notice = renderDisabledNotice({
    alertId: alert.alertId,
    condition: alert.condition,
    walletName: walletName(alert),
    reason: alert.disabledReason,
  });
  const result = await deps.email.sendMail(alert.recipient, notice);
  if (result.error) {
    deps.logger.warn({ alertId: alert.alertId, error: result.error }, "could not email the owner of a disabled alert");
  }
}
