-- The archive of deleted alerts: deleting an alert (or its wallet) deleted, by the foreign keys'
-- cascade, every event it fired, every notification and every delivery attempt, so a compliance
-- desk could no longer show what an alert fired and what was sent once the customer deleted it.
-- Now the delete copies them here first, in the transaction that deletes them (queries/alert-archive.ts),
-- and the API behaves as before (the alert is gone; its owed notifications are not sent).
-- - One table per record, mirroring the live one's columns, not a jsonb document per alert or
--   per event: the archive is one INSERT … SELECT per table, a copy of the rows whose time grows
--   with them and builds nothing in memory (an alert with 200,000 notifications would otherwise
--   be one document of over 100 MB, or per event aggregates to build and unnest to read), and
--   it reads with the same SQL as the live tables.
-- - deleted_alerts.settings: the alert's settings and state, listed column by column by the
--   query, never its webhook secrets (current or previous).
-- - No foreign keys (the rows they would point at are the deleted ones) and nothing deletes these
--   rows: an operator prunes them (README, Risk alerts).
-- New, empty tables: the migration takes no lock on the live ones.
CREATE TABLE "deleted_alert_events" (
	"id" text PRIMARY KEY NOT NULL,
	"alert_id" text NOT NULL,
	"dedupe_key" text NOT NULL,
	"condition" text NOT NULL,
	"observed" numeric NOT NULL,
	"suppressed" boolean NOT NULL,
	"transaction_signature" text,
	"reason" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "deleted_alerts" (
	"id" text PRIMARY KEY NOT NULL,
	"owner" text NOT NULL,
	"wallet_id" text NOT NULL,
	"wallet_address" text NOT NULL,
	"condition" text NOT NULL,
	"settings" jsonb NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"deleted_at" timestamp with time zone DEFAULT now() NOT NULL,
	"deleted_by" text NOT NULL,
	"reason" text NOT NULL,
	CONSTRAINT "deleted_alerts_reason_check" CHECK ("deleted_alerts"."reason" in ('alert deleted', 'wallet deleted'))
);
--> statement-breakpoint
CREATE TABLE "deleted_delivery_attempts" (
	"id" bigint PRIMARY KEY NOT NULL,
	"notification_id" text NOT NULL,
	"at" timestamp with time zone NOT NULL,
	"duration_ms" integer NOT NULL,
	"status_code" integer,
	"error" text,
	"response_body" text
);
--> statement-breakpoint
CREATE TABLE "deleted_notifications" (
	"id" text PRIMARY KEY NOT NULL,
	"alert_id" text NOT NULL,
	"event_id" text,
	"channel" text NOT NULL,
	"destination" text NOT NULL,
	"payload" jsonb NOT NULL,
	"status" text NOT NULL,
	"attempt_count" integer NOT NULL,
	"next_attempt_at" timestamp with time zone,
	"created_at" timestamp with time zone NOT NULL,
	"delivered_at" timestamp with time zone,
	"updated_at" timestamp with time zone NOT NULL,
	"provider_message_id" text,
	"carrier_status" text,
	"carrier_error_code" integer,
	"carrier_updated_at" timestamp with time zone
);
--> statement-breakpoint
CREATE INDEX "deleted_alert_events_alert_idx" ON "deleted_alert_events" USING btree ("alert_id","created_at");--> statement-breakpoint
CREATE INDEX "deleted_alerts_owner_deleted_idx" ON "deleted_alerts" USING btree ("owner","deleted_at");--> statement-breakpoint
CREATE INDEX "deleted_alerts_wallet_idx" ON "deleted_alerts" USING btree ("wallet_id");--> statement-breakpoint
CREATE INDEX "deleted_delivery_attempts_notification_idx" ON "deleted_delivery_attempts" USING btree ("notification_id","at");--> statement-breakpoint
CREATE INDEX "deleted_notifications_alert_idx" ON "deleted_notifications" USING btree ("alert_id");