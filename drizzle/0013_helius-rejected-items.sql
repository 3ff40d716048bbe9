-- The dead letters of the Helius webhook: items of a delivery that POST /v1/ingest/helius
-- refused while it stored the rest and answered 202 (a non-2xx would make Helius retry three
-- times and then drop the whole delivery). Kept whole for an operator to inspect, fix and post
-- again. `item` is json, not jsonb: jsonb refuses a string holding \u0000 (an on-chain name
-- padded with NULs, say), which a refused item may well hold. One row per distinct item
-- (item_sha256), so a retried or replayed delivery adds nothing; indexed by signature for the
-- operator's look-ups.
CREATE TABLE "helius_rejected_items" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"received_at" timestamp with time zone DEFAULT now() NOT NULL,
	"signature" text,
	"errors" jsonb NOT NULL,
	"item" json NOT NULL,
	"item_sha256" text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX "helius_rejected_items_item_sha256_key" ON "helius_rejected_items" USING btree ("item_sha256");--> statement-breakpoint
CREATE INDEX "helius_rejected_items_signature_idx" ON "helius_rejected_items" USING btree ("signature");