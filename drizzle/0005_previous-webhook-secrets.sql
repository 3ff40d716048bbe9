ALTER TABLE "alerts" ADD COLUMN "previous_webhook_secrets" jsonb DEFAULT '[]'::jsonb NOT NULL;--> statement-breakpoint
-- Written by hand: a previous secret still in its grace period moves into the list.
UPDATE "alerts"
SET "previous_webhook_secrets" = jsonb_build_array(jsonb_build_object(
  'secret', "previous_webhook_secret",
  'expiresAt', to_char("previous_secret_expires_at" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')))
WHERE "previous_webhook_secret" IS NOT NULL AND "previous_secret_expires_at" > now();
