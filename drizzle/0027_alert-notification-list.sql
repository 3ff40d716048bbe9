-- The order GET /v1/risk/alerts/{id}/notifications lists an alert's notifications in, oldest
-- first: list_seq, the order they were committed in. A poller resumes after the last one it
-- saw; listed by id, it could pass one committed later with a smaller id (an id is stamped with
-- its writer's clock before the alert's lock is taken: an evaluation that waited for another's
-- lock, a test sent while the alert fired, a worker whose clock runs behind) and never see it.
-- Constant defaults: no rewrite, only the tables' locks for a moment. The notifications made
-- before are 0, listed first, by id; deleted_notifications keeps the column, as the archive
-- keeps every other. IF NOT EXISTS on every statement: an operator may add the column and build
-- the index (CONCURRENTLY) beforehand, as README's upgrade notes say, and the migration finds them.
ALTER TABLE "deleted_notifications" ADD COLUMN IF NOT EXISTS "list_seq" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "notifications" ADD COLUMN IF NOT EXISTS "list_seq" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
-- Built without CONCURRENTLY (a migration runs in a transaction): reads and writes of
-- notifications wait for the build, unless it was built beforehand.
CREATE INDEX IF NOT EXISTS "notifications_alert_list_idx" ON "notifications" USING btree ("alert_id","list_seq","id");--> statement-breakpoint
-- Written by hand (drizzle-kit models neither sequences made here nor triggers). The number is
-- drawn under the alert's row lock, held until the insert commits: the alert's next writer
-- waits for the lock and draws a higher one. An evaluation holds a stronger lock already (FOR
-- UPDATE, record-events.ts); a test holds FOR KEY SHARE, which another test's does not exclude,
-- and is upgraded here. FOR NO KEY UPDATE leaves the foreign keys' FOR KEY SHARE free: inserts
-- of rows that point at the alert do not wait for it. CACHE 1 (the default) on purpose: a
-- cached sequence hands each session a block of numbers, which would not follow the lock.
-- A sequence rather than the alert's max + 1: no lookup, so no plan that a table still small
-- when it was made can turn into a scan of the whole table per row.
CREATE SEQUENCE IF NOT EXISTS "notifications_list_seq" AS bigint CACHE 1;--> statement-breakpoint
CREATE OR REPLACE FUNCTION "number_notification_in_list"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM 1 FROM "alerts" WHERE "id" = NEW."alert_id" FOR NO KEY UPDATE;
  NEW."list_seq" := nextval('notifications_list_seq');
  RETURN NEW;
END $$;--> statement-breakpoint
DROP TRIGGER IF EXISTS "notifications_list_seq" ON "notifications";--> statement-breakpoint
CREATE TRIGGER "notifications_list_seq" BEFORE INSERT ON "notifications" FOR EACH ROW
  EXECUTE FUNCTION "number_notification_in_list"();
