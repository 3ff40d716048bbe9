-- A Helius item moving funds between several accounts is stored as one row per movement
-- (leg 0 its principal one), so the key becomes (signature, leg). Existing rows are leg 0.
ALTER TABLE "transactions" ADD COLUMN "leg" smallint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "transactions" DROP CONSTRAINT "transactions_pkey";--> statement-breakpoint
ALTER TABLE "transactions" ADD CONSTRAINT "transactions_signature_leg_pk" PRIMARY KEY("signature","leg");--> statement-breakpoint
DROP INDEX "transactions_from_newest_idx";--> statement-breakpoint
DROP INDEX "transactions_to_newest_idx";--> statement-breakpoint
CREATE INDEX "transactions_from_newest_idx" ON "transactions" USING btree ("from_address","block_time" DESC NULLS LAST,"slot" DESC NULLS LAST,"signature","leg");--> statement-breakpoint
CREATE INDEX "transactions_to_newest_idx" ON "transactions" USING btree ("to_address","block_time" DESC NULLS LAST,"slot" DESC NULLS LAST,"signature","leg");
