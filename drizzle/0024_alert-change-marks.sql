-- Two marks on the alert of what it has judged since it was made, resumed or edited:
-- - baseline_change_id (risk_score_increase): the newest risk_score_history id of its address
--   at the create or the latest resume. A change at or before it is in the baseline already
--   and is not the alert's: a label change made and taken back during a backlog (0 → 90 → 0,
--   unevaluated) fired "rose 90 points, from 0 to 90" on an alert created afterwards from the
--   score 0, and a change made while the alert was paused fired once it was resumed. 0 for the
--   alerts made before this migration: every change is theirs, as before.
-- - activity_armed (unusual_activity): created, resumed or given a new threshold and not judged
--   since. Its first judgment fires on a trailing hour at or over the limit, not only on a
--   crossing: an alert lowered from 10 to 5 in an hour of 8 transactions never fired for that
--   burst. False for the alerts made before this migration (their bursts were judged).
-- Both constant defaults: no rewrite of the table, only its lock for a moment.
ALTER TABLE "alerts" ADD COLUMN "baseline_change_id" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "alerts" ADD COLUMN "activity_armed" boolean DEFAULT false NOT NULL;--> statement-breakpoint
-- Written by hand (drizzle-kit does not model triggers): the workers cache activity_armed with
-- the alert rules, so its change moves alert_rules_version forward like the columns of 0002;
-- baseline_change_id is read under the alert's lock, as baseline_score, and is not cached.
DROP TRIGGER "alerts_rules_updated" ON "alerts";--> statement-breakpoint
CREATE TRIGGER "alerts_rules_updated" AFTER UPDATE ON "alerts" FOR EACH ROW
  WHEN ((OLD."wallet_id", OLD."condition", OLD."threshold", OLD."token", OLD."notification_method", OLD."webhook_url", OLD."recipient", OLD."status", OLD."activity_armed")
        IS DISTINCT FROM
        (NEW."wallet_id", NEW."condition", NEW."threshold", NEW."token", NEW."notification_method", NEW."webhook_url", NEW."recipient", NEW."status", NEW."activity_armed"))
  EXECUTE FUNCTION "bump_alert_rules_version"();
