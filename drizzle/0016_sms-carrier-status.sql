-- What the carrier did with an SMS. Until now an SMS counted as delivered once Twilio took it
-- (status queued), and what happened next (Twilio's 30003 unreachable handset, 30007 filtered,
-- …) was seen only in the Twilio console. With TWILIO_STATUS_CALLBACK_URL set, each SMS asks
-- Twilio for status callbacks:
-- - provider_message_id: the message's sid, written with the attempt that Twilio accepted; the
--   callbacks name the message by it. Its index is partial (only SMS sent with a sid have one)
--   and not unique on purpose: a sid is Twilio's to keep unique, and a unique violation (a
--   stand-in that hands out one sid, as a mock of Twilio's examples does) would fail the batched
--   statement that records up to 200 attempts, and every message in it would be sent again.
-- - carrier_status, carrier_error_code, carrier_updated_at: the latest status a callback brought
--   (sent, delivered, undelivered, failed…), its error code, and when it came. A final status
--   is never replaced by a late intermediate one (the callbacks arrive in any order).
-- All empty for the notifications before this migration, and for every other channel: nothing
-- is known of them. The index build reads the table once (every value is null, so it stays
-- empty) and holds off writes to notifications meanwhile.
ALTER TABLE "notifications" ADD COLUMN "provider_message_id" text;--> statement-breakpoint
ALTER TABLE "notifications" ADD COLUMN "carrier_status" text;--> statement-breakpoint
ALTER TABLE "notifications" ADD COLUMN "carrier_error_code" integer;--> statement-breakpoint
ALTER TABLE "notifications" ADD COLUMN "carrier_updated_at" timestamp with time zone;--> statement-breakpoint
CREATE INDEX "notifications_provider_message_idx" ON "notifications" USING btree ("provider_message_id") WHERE "notifications"."provider_message_id" is not null;