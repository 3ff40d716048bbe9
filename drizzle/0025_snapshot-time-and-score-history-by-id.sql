-- When an address's account snapshot (balance, token accounts, NFTs) was stored: the wallets'
-- balanceAsOf. Until now a wallet never reported read balance 0 and empty lists, the same as an
-- empty one, and updated_at could not tell them apart: score writes move it too. Set by
-- replaceAccountSnapshots only. Null on every row stored before this migration: the time of an
-- earlier snapshot was not kept, and updated_at would claim figures fresher than they are; the
-- next snapshot of the address sets it.
-- A nullable column without a default: a change of the catalog only, nothing rewritten.
ALTER TABLE "address_state" ADD COLUMN "snapshot_at" timestamp with time zone;--> statement-breakpoint
-- An address's newest score change, max(id), which a risk_score_increase alert takes as its
-- baseline when it is created or resumed (src/db/queries/alerts.ts): with only (address,
-- created_at), Postgres read every change of the address or walked the primary key back
-- through every later change, and through the whole table for an address that never changed
-- (on 1,100,000 changes: 70 ms behind 100,000 later ones, 0.5–0.6 s for no change; with this
-- index 3–4 pages, under 0.5 ms). Nothing reads (address, created_at): it is replaced, so a
-- score write updates one index of the address as before, not two.
-- The build reads the whole table (1.7–2.3 s for those 1,100,000 rows, 96 MB; the index is
-- 41 MB, as the old one), and score writes wait meanwhile (in a run with other migrations,
-- until the run ends); dropping the old index locks the table, reads too, until the run ends.
-- IF [NOT] EXISTS: on a large table, do both first without blocking, by hand, and this
-- migration then has nothing to do here:
--   CREATE INDEX CONCURRENTLY IF NOT EXISTS "risk_score_history_address_id_idx" ON "risk_score_history" ("address","id");
--   DROP INDEX CONCURRENTLY IF EXISTS "risk_score_history_address_idx";
CREATE INDEX IF NOT EXISTS "risk_score_history_address_id_idx" ON "risk_score_history" USING btree ("address","id");--> statement-breakpoint
DROP INDEX IF EXISTS "risk_score_history_address_idx";
