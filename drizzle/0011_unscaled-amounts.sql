-- Amounts as sent: numeric(38, 9) and numeric(24, 6) rounded a transfer of 9.9999999996 to
-- 10 (and a large_transfer alert at 10 fired on it) and a dust amount to 0, without a word.
-- Unconstrained numeric keeps every digit JSON gave us. Dropping a numeric's precision and
-- scale changes no stored value, so Postgres rewrites neither table nor index. Thresholds keep
-- their 9 decimals: unusual_activity compares them in billionths, and a finer one is a 400.
ALTER TABLE "address_state" ALTER COLUMN "balance" SET DATA TYPE numeric;--> statement-breakpoint
ALTER TABLE "address_state" ALTER COLUMN "balance" SET DEFAULT '0';--> statement-breakpoint
ALTER TABLE "alert_events" ALTER COLUMN "observed" SET DATA TYPE numeric;--> statement-breakpoint
ALTER TABLE "nfts" ALTER COLUMN "floor_price" SET DATA TYPE numeric;--> statement-breakpoint
ALTER TABLE "token_accounts" ALTER COLUMN "balance" SET DATA TYPE numeric;--> statement-breakpoint
ALTER TABLE "token_accounts" ALTER COLUMN "usd_value" SET DATA TYPE numeric;--> statement-breakpoint
ALTER TABLE "transactions" ALTER COLUMN "amount" SET DATA TYPE numeric;--> statement-breakpoint
ALTER TABLE "transactions" ALTER COLUMN "fee" SET DATA TYPE numeric;