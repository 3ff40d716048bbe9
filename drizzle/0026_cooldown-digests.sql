-- The cooldown digests: one per alert and cooldown window that held back a firing, made in the
-- transaction that records the window's first suppressed event, with its notification (no event,
-- a risk_alert.suppressed payload) due at the window's end. The key keeps replays, retries and
-- concurrent evaluations to one digest per window; both foreign keys cascade, so a deleted alert
-- takes its digests with it (the archive keeps the notification row).
CREATE TABLE "cooldown_digests" (
	"alert_id" text NOT NULL,
	"window_start" timestamp with time zone NOT NULL,
	"window_end" timestamp with time zone NOT NULL,
	"notification_id" text NOT NULL,
	CONSTRAINT "cooldown_digests_alert_id_window_start_window_end_pk" PRIMARY KEY("alert_id","window_start","window_end")
);
--> statement-breakpoint
ALTER TABLE "cooldown_digests" ADD CONSTRAINT "cooldown_digests_alert_id_alerts_id_fk" FOREIGN KEY ("alert_id") REFERENCES "public"."alerts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "cooldown_digests" ADD CONSTRAINT "cooldown_digests_notification_id_notifications_id_fk" FOREIGN KEY ("notification_id") REFERENCES "public"."notifications"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "cooldown_digests_notification_key" ON "cooldown_digests" USING btree ("notification_id");