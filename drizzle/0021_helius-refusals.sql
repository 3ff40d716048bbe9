-- A Helius item refused again (Helius retrying its delivery, an operator's replay) kept the
-- errors of its first refusal, while the answer gave the current ones: after fixing one cause
-- and replaying, the table still gave the old reason for an item now refused for another. Now
-- each refusal of an item kept already rewrites its row's `errors` and counts and dates itself:
-- - refusals: how many deliveries refused the item (a delivery holding it twice counts once);
-- - last_refused_at: the latest refusal's time, which `errors` are from; received_at stays the
--   first refusal's.
-- The rows kept before this migration were refused once as far as anyone knows, last at their
-- first refusal's time (the UPDATE). It rewrites every row, holding an exclusive lock on
-- helius_rejected_items until the migration commits (a table of refused items only: small);
-- a delivery with refused items waits meanwhile.
ALTER TABLE "helius_rejected_items" ADD COLUMN "refusals" integer DEFAULT 1 NOT NULL;--> statement-breakpoint
ALTER TABLE "helius_rejected_items" ADD COLUMN "last_refused_at" timestamp with time zone DEFAULT now() NOT NULL;--> statement-breakpoint
UPDATE "helius_rejected_items" SET "last_refused_at" = "received_at";
