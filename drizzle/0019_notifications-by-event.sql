-- Notifications by their event: deleting an alert deletes its events, and the foreign key's
-- cascade looks each event's notifications up by event_id, which had no index: every deleted
-- event read the whole notifications table (2,000 events over 200,000 notifications: 49 s,
-- holding the alert's lock while evaluations that fire it waited; 22 ms with the index).
-- IF NOT EXISTS: on a large table, build it first without blocking writes, by hand, and this
-- migration then has nothing to do:
--   CREATE INDEX CONCURRENTLY IF NOT EXISTS "notifications_event_idx" ON "notifications" ("event_id");
CREATE INDEX IF NOT EXISTS "notifications_event_idx" ON "notifications" USING btree ("event_id");
