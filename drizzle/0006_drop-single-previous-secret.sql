ALTER TABLE "alerts" DROP COLUMN "previous_webhook_secret";--> statement-breakpoint
ALTER TABLE "alerts" DROP COLUMN "previous_secret_expires_at";