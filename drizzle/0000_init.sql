CREATE TABLE "address_state" (
	"address" text PRIMARY KEY NOT NULL,
	"balance" numeric(38, 9) DEFAULT '0' NOT NULL,
	"token_account_count" integer DEFAULT 0 NOT NULL,
	"nft_count" integer DEFAULT 0 NOT NULL,
	"risk_score" smallint DEFAULT 0 NOT NULL,
	"risk_factors" text[] DEFAULT '{}'::text[] NOT NULL,
	"last_activity" bigint,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "alert_events" (
	"id" text PRIMARY KEY NOT NULL,
	"alert_id" text NOT NULL,
	"dedupe_key" text NOT NULL,
	"condition" text NOT NULL,
	"observed" numeric(38, 9) NOT NULL,
	"suppressed" boolean DEFAULT false NOT NULL,
	"transaction_signature" text,
	"reason" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "alerts" (
	"id" text PRIMARY KEY NOT NULL,
	"owner" text NOT NULL,
	"wallet_id" text NOT NULL,
	"condition" text NOT NULL,
	"threshold" numeric(38, 9) NOT NULL,
	"token" text,
	"notification_method" text NOT NULL,
	"webhook_url" text,
	"recipient" text,
	"cooldown_seconds" integer DEFAULT 0 NOT NULL,
	"status" text DEFAULT 'active' NOT NULL,
	"webhook_secret" text,
	"previous_webhook_secret" text,
	"previous_secret_expires_at" timestamp with time zone,
	"baseline_score" smallint,
	"last_notified_at" timestamp with time zone,
	"failing_since" timestamp with time zone,
	"disabled_reason" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "delivery_attempts" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"notification_id" text NOT NULL,
	"at" timestamp with time zone NOT NULL,
	"duration_ms" integer NOT NULL,
	"status_code" integer,
	"error" text,
	"response_body" text
);
--> statement-breakpoint
CREATE TABLE "ingest_batches" (
	"id" text PRIMARY KEY NOT NULL,
	"transaction_count" integer NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"evaluated_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "nfts" (
	"address" text NOT NULL,
	"mint" text NOT NULL,
	"name" text NOT NULL,
	"collection" text NOT NULL,
	"floor_price" numeric(24, 6) NOT NULL,
	CONSTRAINT "nfts_address_mint_pk" PRIMARY KEY("address","mint")
);
--> statement-breakpoint
CREATE TABLE "notifications" (
	"id" text PRIMARY KEY NOT NULL,
	"alert_id" text NOT NULL,
	"event_id" text,
	"channel" text NOT NULL,
	"destination" text NOT NULL,
	"payload" jsonb NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"attempt_count" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"delivered_at" timestamp with time zone,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "risk_labels" (
	"address" text PRIMARY KEY NOT NULL,
	"category" text NOT NULL,
	"score" smallint NOT NULL,
	"source" text,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "risk_score_history" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"address" text NOT NULL,
	"previous_score" smallint NOT NULL,
	"score" smallint NOT NULL,
	"factors" text[] NOT NULL,
	"cause" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"evaluated_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "token_accounts" (
	"address" text NOT NULL,
	"mint" text NOT NULL,
	"symbol" text NOT NULL,
	"balance" numeric(38, 9) NOT NULL,
	"usd_value" numeric(24, 6) NOT NULL,
	CONSTRAINT "token_accounts_address_mint_pk" PRIMARY KEY("address","mint")
);
--> statement-breakpoint
CREATE TABLE "tracked_wallets" (
	"id" text PRIMARY KEY NOT NULL,
	"owner" text NOT NULL,
	"address" text NOT NULL,
	"alias" text,
	"tags" text[] DEFAULT '{}'::text[] NOT NULL,
	"tracked_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "transactions" (
	"signature" text PRIMARY KEY NOT NULL,
	"type" text NOT NULL,
	"amount" numeric(38, 9) NOT NULL,
	"token" text NOT NULL,
	"mint" text,
	"from_address" text NOT NULL,
	"to_address" text NOT NULL,
	"block_time" bigint NOT NULL,
	"slot" bigint NOT NULL,
	"fee" numeric(20, 9) NOT NULL,
	"status" text NOT NULL,
	"batch_id" text NOT NULL,
	"ingested_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "alert_events" ADD CONSTRAINT "alert_events_alert_id_alerts_id_fk" FOREIGN KEY ("alert_id") REFERENCES "public"."alerts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "alerts" ADD CONSTRAINT "alerts_wallet_id_tracked_wallets_id_fk" FOREIGN KEY ("wallet_id") REFERENCES "public"."tracked_wallets"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "delivery_attempts" ADD CONSTRAINT "delivery_attempts_notification_id_notifications_id_fk" FOREIGN KEY ("notification_id") REFERENCES "public"."notifications"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "notifications" ADD CONSTRAINT "notifications_alert_id_alerts_id_fk" FOREIGN KEY ("alert_id") REFERENCES "public"."alerts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "notifications" ADD CONSTRAINT "notifications_event_id_alert_events_id_fk" FOREIGN KEY ("event_id") REFERENCES "public"."alert_events"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "alert_events_alert_dedupe_key" ON "alert_events" USING btree ("alert_id","dedupe_key");--> statement-breakpoint
CREATE INDEX "alert_events_alert_newest_idx" ON "alert_events" USING btree ("alert_id","created_at" DESC NULLS LAST,"id");--> statement-breakpoint
CREATE INDEX "alerts_owner_created_idx" ON "alerts" USING btree ("owner","created_at");--> statement-breakpoint
CREATE INDEX "alerts_wallet_idx" ON "alerts" USING btree ("wallet_id");--> statement-breakpoint
CREATE INDEX "delivery_attempts_notification_idx" ON "delivery_attempts" USING btree ("notification_id","at");--> statement-breakpoint
CREATE INDEX "ingest_batches_unevaluated_idx" ON "ingest_batches" USING btree ("created_at") WHERE "ingest_batches"."evaluated_at" is null;--> statement-breakpoint
CREATE INDEX "notifications_alert_idx" ON "notifications" USING btree ("alert_id");--> statement-breakpoint
CREATE INDEX "notifications_open_idx" ON "notifications" USING btree ("created_at") WHERE "notifications"."status" in ('pending', 'retrying');--> statement-breakpoint
CREATE INDEX "risk_score_history_address_idx" ON "risk_score_history" USING btree ("address","created_at");--> statement-breakpoint
CREATE INDEX "risk_score_history_unevaluated_idx" ON "risk_score_history" USING btree ("id") WHERE "risk_score_history"."evaluated_at" is null;--> statement-breakpoint
CREATE UNIQUE INDEX "tracked_wallets_owner_address_key" ON "tracked_wallets" USING btree ("owner","address");--> statement-breakpoint
CREATE INDEX "tracked_wallets_address_idx" ON "tracked_wallets" USING btree ("address");--> statement-breakpoint
CREATE INDEX "transactions_from_newest_idx" ON "transactions" USING btree ("from_address","block_time" DESC NULLS LAST,"slot" DESC NULLS LAST,"signature");--> statement-breakpoint
CREATE INDEX "transactions_to_newest_idx" ON "transactions" USING btree ("to_address","block_time" DESC NULLS LAST,"slot" DESC NULLS LAST,"signature");--> statement-breakpoint
CREATE INDEX "transactions_batch_idx" ON "transactions" USING btree ("batch_id");