-- The record that lets the workers tell a Redis that lost the activity counters from a
-- deployment that never had the mark (src/pipeline/activity-reseed-watch.ts). Redis's
-- <prefix>:activity-complete key holds a random token, and this one row holds the same one: it
-- outlives a Redis loss. No row: this deployment never had the key (a new one, or the first start
-- after the upgrade that added this table, when Redis still holds its counters): the first check
-- writes one token to both, without warning. A row, and the key missing or holding another
-- token: Redis lost the counters. Written by that first check and by each `npm run reseed-activity`.
-- One row: the primary key is a boolean that the check constraint allows only true.
-- A new, empty table: nothing to wait for.
CREATE TABLE "activity_counters_mark" (
	"single" boolean PRIMARY KEY DEFAULT true NOT NULL,
	"token" text NOT NULL,
	"how" text NOT NULL,
	"set_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "activity_counters_mark_single_check" CHECK ("activity_counters_mark"."single")
);
