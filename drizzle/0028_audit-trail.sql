-- The audit trail (a compliance review): what an alert was judged by and who changed it, where
-- each delivery attempt went, and what each label load changed. New tables, and nullable columns
-- with no default (no rewrite, only each table's lock for a moment): rows made before read null.
-- alert_changes has no foreign key on purpose: an alert's history outlives the alert. IF NOT
-- EXISTS on every statement, as in 0027: old code may run beside it (it writes none of these).
CREATE TABLE IF NOT EXISTS "alert_changes" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"alert_id" text NOT NULL,
	"owner" text NOT NULL,
	"at" timestamp with time zone DEFAULT now() NOT NULL,
	"by" text NOT NULL,
	"action" text NOT NULL,
	"changes" jsonb NOT NULL
);
--> statement-breakpoint
CREATE TABLE IF NOT EXISTS "label_changes" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"load_id" text NOT NULL,
	"at" timestamp with time zone DEFAULT now() NOT NULL,
	"by" text NOT NULL,
	"address" text COLLATE "C" NOT NULL,
	"source" text COLLATE "C" NOT NULL,
	"previous_category" text,
	"previous_score" smallint,
	"category" text,
	"score" smallint
);
--> statement-breakpoint
ALTER TABLE "alert_events" ADD COLUMN IF NOT EXISTS "judged_settings" jsonb;--> statement-breakpoint
ALTER TABLE "alert_events" ADD COLUMN IF NOT EXISTS "risk_score" smallint;--> statement-breakpoint
ALTER TABLE "alert_events" ADD COLUMN IF NOT EXISTS "risk_factors" text[];--> statement-breakpoint
ALTER TABLE "deleted_alert_events" ADD COLUMN IF NOT EXISTS "judged_settings" jsonb;--> statement-breakpoint
ALTER TABLE "deleted_alert_events" ADD COLUMN IF NOT EXISTS "risk_score" smallint;--> statement-breakpoint
ALTER TABLE "deleted_alert_events" ADD COLUMN IF NOT EXISTS "risk_factors" text[];--> statement-breakpoint
ALTER TABLE "deleted_delivery_attempts" ADD COLUMN IF NOT EXISTS "destination" text;--> statement-breakpoint
ALTER TABLE "delivery_attempts" ADD COLUMN IF NOT EXISTS "destination" text;--> statement-breakpoint
ALTER TABLE "label_rescores" ADD COLUMN IF NOT EXISTS "load_id" text;--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "alert_changes_alert_idx" ON "alert_changes" USING btree ("alert_id","id");--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "label_changes_address_idx" ON "label_changes" USING btree ("address","id");--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "label_changes_load_idx" ON "label_changes" USING btree ("load_id");--> statement-breakpoint
-- Written by hand (drizzle-kit models no triggers). An alert's record (its events,
-- notifications and delivery attempts, which go with it: ON DELETE CASCADE) is archived by the
-- transaction that deletes it (src/db/queries/alert-archive.ts), before the delete. The database
-- now holds every deleter to that: a row of alerts is deleted only once deleted_alerts has its
-- id, so a plain `delete from tracked_wallets` (a cleanup script, a support session) fails
-- instead of erasing the record of every alert on the wallet with no archive row. An erasure
-- (README, Erasing a caller) says so on purpose, in its own transaction only:
-- SET LOCAL wallet_alerts.erasing = 'on'. A setting rather than ALTER TABLE … DISABLE TRIGGER,
-- which turns the guard off for every session until ENABLE TRIGGER (the API and the workers
-- too), needs the table's owner, and whose lock (SHARE ROW EXCLUSIVE) stops every write to
-- alerts until its transaction ends; a SET LOCAL ends with its transaction, committed or not,
-- and no other connection sees it. A guard against mistakes, not a permission: whoever may
-- delete from alerts may set it.
CREATE OR REPLACE FUNCTION "refuse_unarchived_alert_delete"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF current_setting('wallet_alerts.erasing', true) IS DISTINCT FROM 'on'
     AND NOT EXISTS (SELECT 1 FROM "deleted_alerts" WHERE "id" = OLD."id") THEN
    RAISE EXCEPTION 'alert % is not archived: delete it through the API (its record is archived first), or archive it in deleted_alerts', OLD."id"
      USING ERRCODE = 'restrict_violation',
            HINT = 'To erase on purpose, run SET LOCAL wallet_alerts.erasing = ''on'' in the deleting transaction (README, Erasing a caller).';
  END IF;
  RETURN OLD;
END $$;--> statement-breakpoint
DROP TRIGGER IF EXISTS "alerts_archived_before_delete" ON "alerts";--> statement-breakpoint
CREATE TRIGGER "alerts_archived_before_delete" BEFORE DELETE ON "alerts" FOR EACH ROW
  EXECUTE FUNCTION "refuse_unarchived_alert_delete"();
