-- large_transfer alerts may leave out the caller's own moves (ignoreOwnWallets): a transfer whose
-- other side is a wallet the alert's owner also tracks (a hot wallet's daily sweep to its cold
-- wallet, a treasury refilling its ops wallets) is not judged by that alert
-- (src/domain/conditions/own-wallets.ts). A constant default: PostgreSQL 11 and later add the
-- column without rewriting the table (the default is kept in the catalog), only the table's lock
-- for a moment; every alert made before reads false (judged as before). Set at creation only, so
-- the alert_rules_version triggers (0024) need no change: an insert moves the version already.
-- IF NOT EXISTS, as in 0027 to 0029: old code may run beside it (it never writes the column).
ALTER TABLE "alerts" ADD COLUMN IF NOT EXISTS "ignore_own_wallets" boolean DEFAULT false NOT NULL;
