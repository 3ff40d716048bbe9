-- Counterparty labels keyed by address and source. Keyed by address alone, each import replaced
-- the label of the one before: an operator who loaded OFAC's list and then a vendor's lost OFAC's
-- `sanctioned` wherever the vendor said `mixer` or `exchange` (every wallet that had dealt with the
-- address fell from 90, and rose again, paging its owners, at the next OFAC import), and a
-- delisting by one list removed what the other said. Now each list keeps its own row.
-- - source: '' for the labels loaded without one (the API still takes and answers null for
--   them); the existing rows without a source become '' before the column is made NOT NULL, so
--   every label survives. Compared byte by byte, as the address (0003): the two make up the key,
--   and everything that locks labels locks them in (address, source) order.
-- - updated_by: the caller (the token's sub) of the PUT that last wrote the row; empty for the
--   rows written before this migration, whose writer nobody recorded.
-- The statements hold an exclusive lock on risk_labels until the migration commits: the UPDATE
-- rewrites the rows without a source, and the new primary key builds its index (seconds for a
-- vendor's list of millions of addresses); label imports and evaluations wait meanwhile.
UPDATE "risk_labels" SET "source" = '' WHERE "source" IS NULL;--> statement-breakpoint
ALTER TABLE "risk_labels" ALTER COLUMN "source" SET DATA TYPE text COLLATE "C";--> statement-breakpoint
ALTER TABLE "risk_labels" ALTER COLUMN "source" SET DEFAULT '';--> statement-breakpoint
ALTER TABLE "risk_labels" ALTER COLUMN "source" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "risk_labels" ADD COLUMN "updated_by" text;--> statement-breakpoint
ALTER TABLE "risk_labels" DROP CONSTRAINT "risk_labels_pkey";--> statement-breakpoint
ALTER TABLE "risk_labels" ADD CONSTRAINT "risk_labels_address_source_pk" PRIMARY KEY("address","source");
