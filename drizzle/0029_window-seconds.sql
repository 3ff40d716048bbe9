-- large_transfer alerts summed over a trailing window (windowSeconds): the wallet's sends of the
-- alert's token, added up over the window, judged against the threshold, so that a movement split
-- into parts each below the threshold still fires (src/domain/conditions/large-transfer-window.ts).
-- A nullable column with no default: no rewrite, only the table's lock for a moment; every alert
-- made before reads null (each transaction judged alone, as before). Set at creation only, so the
-- alert_rules_version triggers (0024) need no change: an insert moves the version already. IF NOT
-- EXISTS, as in 0027 and 0028: old code may run beside it (it never writes the column).
ALTER TABLE "alerts" ADD COLUMN IF NOT EXISTS "window_seconds" integer;
