CREATE TABLE "alert_rules_version" (
	"id" smallint PRIMARY KEY DEFAULT 1 NOT NULL,
	"version" bigint DEFAULT 0 NOT NULL
);
--> statement-breakpoint
-- Written by hand (drizzle-kit does not model triggers): the one row, and the triggers that move
-- it forward whenever what the evaluation workers cache of alerts and tracked wallets changes.
-- Inserts and deletes move it once per statement; updates once per row that changes a column the
-- workers read (the pipeline's own last_notified_at and baseline_score, delivery health's
-- failing_since, secrets and tags do not). In the writer's own transaction, so a worker that
-- sees the new version also sees the change.
ALTER TABLE "alert_rules_version" ADD CONSTRAINT "alert_rules_version_single_row" CHECK ("id" = 1);--> statement-breakpoint
INSERT INTO "alert_rules_version" ("id", "version") VALUES (1, 0);--> statement-breakpoint
CREATE FUNCTION "bump_alert_rules_version"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE "alert_rules_version" SET "version" = "version" + 1 WHERE "id" = 1;
  RETURN NULL;
END
$$;--> statement-breakpoint
CREATE TRIGGER "alerts_rules_changed" AFTER INSERT OR DELETE OR TRUNCATE ON "alerts"
  FOR EACH STATEMENT EXECUTE FUNCTION "bump_alert_rules_version"();--> statement-breakpoint
CREATE TRIGGER "alerts_rules_updated" AFTER UPDATE ON "alerts" FOR EACH ROW
  WHEN ((OLD."wallet_id", OLD."condition", OLD."threshold", OLD."token", OLD."notification_method", OLD."webhook_url", OLD."recipient", OLD."status")
        IS DISTINCT FROM
        (NEW."wallet_id", NEW."condition", NEW."threshold", NEW."token", NEW."notification_method", NEW."webhook_url", NEW."recipient", NEW."status"))
  EXECUTE FUNCTION "bump_alert_rules_version"();--> statement-breakpoint
CREATE TRIGGER "tracked_wallets_rules_changed" AFTER INSERT OR DELETE OR TRUNCATE ON "tracked_wallets"
  FOR EACH STATEMENT EXECUTE FUNCTION "bump_alert_rules_version"();--> statement-breakpoint
CREATE TRIGGER "tracked_wallets_rules_updated" AFTER UPDATE ON "tracked_wallets" FOR EACH ROW
  WHEN ((OLD."id", OLD."address", OLD."alias") IS DISTINCT FROM (NEW."id", NEW."address", NEW."alias"))
  EXECUTE FUNCTION "bump_alert_rules_version"();
