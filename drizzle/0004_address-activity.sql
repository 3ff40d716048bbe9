CREATE TABLE "address_activity" (
	"address" text COLLATE "C" PRIMARY KEY NOT NULL,
	"last_activity" bigint,
	"transaction_count" bigint DEFAULT 0 NOT NULL
);
--> statement-breakpoint
-- Written by hand: the counters move over before their columns go.
INSERT INTO "address_activity" ("address", "last_activity", "transaction_count")
SELECT "address", "last_activity", "transaction_count" FROM "address_state"
WHERE "last_activity" IS NOT NULL OR "transaction_count" > 0;--> statement-breakpoint
ALTER TABLE "address_state" DROP COLUMN "last_activity";--> statement-breakpoint
ALTER TABLE "address_state" DROP COLUMN "transaction_count";
