-- Identifiers compared byte by byte (see `identifier` in src/db/schema.ts). Each ALTER rewrites
-- its table and rebuilds its indexes, so the transactions table's four columns change in one
-- statement (one rewrite); on a large table this holds an exclusive lock for the rewrite.
ALTER TABLE "address_state" ALTER COLUMN "address" SET DATA TYPE text COLLATE "C";--> statement-breakpoint
ALTER TABLE "ingest_batches" ALTER COLUMN "id" SET DATA TYPE text COLLATE "C";--> statement-breakpoint
ALTER TABLE "risk_labels" ALTER COLUMN "address" SET DATA TYPE text COLLATE "C";--> statement-breakpoint
ALTER TABLE "transactions"
  ALTER COLUMN "signature" SET DATA TYPE text COLLATE "C",
  ALTER COLUMN "from_address" SET DATA TYPE text COLLATE "C",
  ALTER COLUMN "to_address" SET DATA TYPE text COLLATE "C",
  ALTER COLUMN "batch_id" SET DATA TYPE text COLLATE "C";
