-- Twilio status callbacks that outran the recording of their attempt. The SMS worker writes a
-- message's sid (provider_message_id) only after Twilio's answer, in a batched statement, and a
-- callback naming a sid no notification has yet was dropped; Twilio does not retry it, so the
-- carrier's word was lost for good. Such a callback is now kept here, one row per sid (the
-- callbacks so far merged by the same rules as the notification's columns), and applied when
-- the attempt with that sid is recorded (src/db/queries/carrier-status.ts says why neither
-- side can miss the other). Rows of a sid no attempt ever claims (a message of another service
-- on the account, a replay) are deleted after an hour by the next early callback; the index on
-- received_at finds them. A new, empty table: nothing to backfill, no lock on anything else.
CREATE TABLE "early_carrier_statuses" (
	"message_sid" text PRIMARY KEY NOT NULL,
	"status" text NOT NULL,
	"error_code" integer,
	"received_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE INDEX "early_carrier_statuses_received_idx" ON "early_carrier_statuses" USING btree ("received_at");