-- Two instants on the alert, both nullable, both read only by the API and the notice job:
-- - secret_rotated_at: the latest POST .../rotate-secret (set by its query). A create replayed
--   under its Idempotency-Key after a rotation is a 409 naming the alert, not the first answer
--   with the current secret in it. Filled here for the alerts rotated before this migration
--   that a replay could still reach: a replaced secret on record (previous_webhook_secrets,
--   newest first, each expiring 24 h after its rotation) dates the latest rotation.
-- - disabled_at: when alert health disabled the alert, cleared when the owner sets a status.
--   The notice job carries it, so a notice of an earlier disabling (the alert re-enabled and
--   disabled again while it waited for a retry) is dropped rather than sent a second time.
--   Empty for alerts disabled before this migration: their queued notices carry no instant
--   and are judged by the status alone, as before.
-- Neither is in the triggers of 0002: evaluation never reads them, so setting them must not
-- reload the workers' alert rules (a disabling does, through status).
ALTER TABLE "alerts" ADD COLUMN "secret_rotated_at" timestamp with time zone;--> statement-breakpoint
-- Written by hand: the backfill said above.
UPDATE "alerts"
SET "secret_rotated_at" = ("previous_webhook_secrets"->0->>'expiresAt')::timestamptz - interval '24 hours'
WHERE jsonb_array_length("previous_webhook_secrets") > 0;--> statement-breakpoint
ALTER TABLE "alerts" ADD COLUMN "disabled_at" timestamp with time zone;