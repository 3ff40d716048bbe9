ALTER TABLE "alerts" ADD COLUMN "idempotency_key" text;--> statement-breakpoint
ALTER TABLE "alerts" ADD COLUMN "idempotency_fingerprint" text;--> statement-breakpoint
CREATE UNIQUE INDEX "alerts_owner_idempotency_key" ON "alerts" USING btree ("owner","idempotency_key") WHERE "alerts"."idempotency_key" is not null;