-- disabled_notice_owed: the notice to the owner of a disabled alert is still owed. Until now
-- the notice lived only as a BullMQ job: a Redis flush, or an enqueue that failed after the
-- disabling committed, lost it, and the owner learned of the disabling only by missing alerts.
-- Set with disabled_at by alert health, cleared by the notice job when it is done with it and
-- when the owner sets a status; the reconciler queues it again while set (the partial index
-- keeps that sweep to the few owed rows). Not backfilled: whether the notices of alerts
-- disabled before this migration were sent is not known, and sending one twice is worse
-- than the status and disabledReason the API already shows. Not in the triggers of 0002:
-- evaluation never reads it.
ALTER TABLE "alerts" ADD COLUMN "disabled_notice_owed" boolean DEFAULT false NOT NULL;--> statement-breakpoint
CREATE INDEX "alerts_disabled_notice_owed_idx" ON "alerts" USING btree ("id") WHERE "alerts"."disabled_notice_owed";