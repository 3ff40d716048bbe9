// A page of an alert's events reads that page from alert_events_alert_newest_idx, however many
// events the alert has. Its order once missed the index's "nulls last", so every page read and
// sorted all of the alert's events (0.5 s a page at 200,000), and the notification of each
// event the offset skipped was looked up too. What a page read is counted by Postgres itself
// (pg_stat_xact_user_tables).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDb, type Sql } from "../../src/db/client.ts";
import { listAlertEvents } from "../../src/db/queries/events.ts";
import { createTestDatabase } from "../helpers/db.ts";
import { countTableReads } from "../helpers/table-reads.ts";

let database: Awaited<ReturnType<typeof createTestDatabase>>;
let sql: Sql;

const EVENTS = 20_000;
/** Another alert's, five times as many: the busy alert's events are a small part of the table, as any one alert's are. */
const OTHER_EVENTS = 100_000;

beforeAll(async () => {
  database = await createTestDatabase("alert-events-plan");
  sql = createDb(database.url, { max: 1 }).sql;
  await sql`insert into tracked_wallets (id, owner, address) values ('wal_plan', 'alice', 'PlanAddress')`;
  await sql`
    insert into alerts (id, owner, wallet_id, condition, threshold, notification_method, webhook_url, webhook_secret)
    select 'alr_plan_' || a, 'alice', 'wal_plan', 'large_transfer', 1, 'webhook', 'https://hooks.example/x', 'whsec_plan'
    from unnest(array['busy', 'other']) as a`;
  // Two alerts' events, one event a second, each with its notification.
  await sql`
    insert into alert_events (id, alert_id, dedupe_key, condition, observed, transaction_signature, reason, created_at)
    select 'evt_' || a || '_' || i, 'alr_plan_' || a, 'sig_' || i, 'large_transfer', i, 'sig_' || i, 'x',
           timestamptz '2026-11-01' + i * interval '1 second'
    from (values ('busy', ${EVENTS}::int), ('other', ${OTHER_EVENTS}::int)) as alert(a, n), generate_series(1, n) as i`;
  await sql`
    insert into notifications (id, alert_id, event_id, channel, destination, payload, status, created_at, updated_at)
    select 'ntf_' || e.id, e.alert_id, e.id, 'webhook', 'https://hooks.example/x', '{}'::jsonb, 'delivered', e.created_at, e.created_at
    from alert_events e`;
  // As autovacuum leaves a table that stopped growing: analyzed, its pages all visible.
  await sql`vacuum analyze alert_events`;
  await sql`vacuum analyze notifications`;
});
afterAll(async () => {
  await sql?.end();
  await database?.drop();
});

describe("a page of an alert's events", () => {
  it("reads the page's events through the index, not every event of the alert, at the start of a long list", async () => {
    const events = await countTableReads(sql, "alert_events", async (tx) => {
      const page = await listAlertEvents(tx, "alr_plan_busy", { offset: 0, limit: 50 });
      expect(page?.rows.map((row) => row.eventId).slice(0, 2)).toEqual([`evt_busy_${EVENTS}`, `evt_busy_${EVENTS - 1}`]);
      expect(page?.rows.at(0)?.notificationId).toBe(`ntf_evt_busy_${EVENTS}`);
      expect(page?.total).toBe(EVENTS);
    });
    expect(events.seqScans).toBe(0);
    expect(events.rowsFetchedByIndex).toBeLessThanOrEqual(51 + 1);
  });

  it("looks up the notifications of the page's events only, not of those the offset skips", async () => {
    const notifications = await countTableReads(sql, "notifications", async (tx) => {
      const page = await listAlertEvents(tx, "alr_plan_busy", { offset: 10_000, limit: 50 });
      expect(page?.rows.at(0)?.eventId).toBe(`evt_busy_${EVENTS - 10_000}`);
      expect(page?.rows.at(-1)?.notificationId).toBe(`ntf_evt_busy_${EVENTS - 10_049}`);
    });
    expect(notifications.seqScans).toBe(0);
    expect(notifications.rowsFetchedByIndex).toBeLessThanOrEqual(51);
  });
});
