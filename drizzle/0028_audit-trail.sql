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
CREATE INDEX IF NOT EXISTS "alert_changes_alert_idx" ON "alert_changes" USING btree ("alert_id","id");--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "label_changes_address_idx" ON "label_changes" USING btree ("address","id");--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "label_changes_load_idx" ON "label_changes" USING btree ("load_id");