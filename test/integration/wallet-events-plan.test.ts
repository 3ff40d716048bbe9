// A page of a wallet's export (db/queries/wallet-events.ts) on a realistic record: a wallet of
// live and deleted alerts, thousands of events among many more of other wallets, evaluations
// that date several events alike (of one alert, and of a live and a deleted one). Paged with a
// small limit, it lists each event once, in (createdAt, eventId) order, ties included; and a
// page reads that page from each alert's index, not the wallet's whole record. What a page read
// is counted by Postgres itself (pg_stat_xact_user_tables).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDb, type Sql } from "../../src/db/client.ts";
import { listWalletEvents } from "../../src/db/queries/wallet-events.ts";
import { createTestDatabase } from "../helpers/db.ts";
import { countTableReads } from "../helpers/table-reads.ts";

let database: Awaited<ReturnType<typeof createTestDatabase>>;
let sql: Sql;

const LIVE = ["alr_w_live1", "alr_w_live2", "alr_w_live3"];
const DELETED = ["alr_w_gone1", "alr_w_gone2"];
/** Evaluations, one a minute; each fires every alert of the wallet, so their events share an instant. */
const EVALUATIONS = 600;
/** Of those, every tenth is a batch that fired the first live and the first deleted alert twice more at its instant. */
const BATCH_EVERY = 10;

beforeAll(async () => {
  database = await createTestDatabase("wallet-events-plan");
  sql = createDb(database.url, { max: 1 }).sql;
  await sql`insert into ingest_batches (id, transaction_count) values ('bat_plan', 0)`;
  await sql`insert into tracked_wallets (id, owner, address) values ('wal_w', 'alice', 'WalletW'), ('wal_x', 'alice', 'WalletX')`;
  await sql`
    insert into alerts (id, owner, wallet_id, condition, threshold, notification_method, webhook_url, webhook_secret)
    select id, 'alice', 'wal_w', 'large_transfer', 1, 'webhook', 'https://hooks.example/x', 'whsec_plan' from unnest(${LIVE}::text[]) id
    union all
    select 'alr_x' || i, 'alice', 'wal_x', 'large_transfer', 1, 'webhook', 'https://hooks.example/x', 'whsec_plan' from generate_series(1, 20) i`;
  await sql`
    insert into deleted_alerts (id, owner, wallet_id, wallet_address, condition, settings, created_at, deleted_by, reason)
    select id, 'alice', 'wal_w', 'WalletW', 'large_transfer', '{}'::jsonb, now(), 'alice', 'alert deleted' from unnest(${DELETED}::text[]) id
    union all
    select 'alr_xgone' || i, 'alice', 'wal_x', 'WalletX', 'large_transfer', '{}'::jsonb, now(), 'alice', 'alert deleted' from generate_series(1, 40) i`;
  await sql`
    insert into transactions (signature, leg, type, amount, token, from_address, to_address, block_time, slot, fee, status, batch_id)
    select 'sig_w_' || i, 0, 'transfer', i, 'SOL', 'WalletW', 'Elsewhere', 1793491200 + i * 60, i, 0, 'success', 'bat_plan'
    from generate_series(1, ${EVALUATIONS}::int) i`;
  // Ids made at random within an instant, so that the id alone orders the events of one evaluation.
  const events = (table: "alert_events" | "deleted_alert_events", alerts: string[]) => sql`
    insert into ${sql(table)} (id, alert_id, dedupe_key, condition, observed, suppressed, transaction_signature, reason, created_at)
    select 'evt_' || md5(a || i || k), a, i || '-' || k, 'large_transfer', i, false, 'sig_w_' || i, 'x',
           timestamptz '2026-11-01' + i * interval '1 minute'
    from unnest(${alerts}::text[]) a, generate_series(1, ${EVALUATIONS}::int) i, generate_series(0, 2) k
    where k = 0 or (i % ${BATCH_EVERY} = 0 and a in (${LIVE[0]!}, ${DELETED[0]!}))`;
  await events("alert_events", LIVE);
  await events("deleted_alert_events", DELETED);
  // Other callers' wallets' records (written as one wallet's), many times this one's: the live ones, and an archive that grew with every caller's deletions.
  await sql`
    insert into alert_events (id, alert_id, dedupe_key, condition, observed, reason, created_at)
    select 'evt_x' || i, 'alr_x' || (i % 20 + 1), 'k' || i, 'large_transfer', 1, 'x', timestamptz '2026-11-01' + i * interval '3 seconds'
    from generate_series(1, 15000) i`;
  await sql`
    insert into deleted_alert_events (id, alert_id, dedupe_key, condition, observed, suppressed, reason, created_at)
    select 'evt_xgone' || i, 'alr_xgone' || (i % 40 + 1), 'k' || i, 'large_transfer', 1, false, 'x', timestamptz '2026-11-01' + i * interval '1 second'
    from generate_series(1, 40000) i`;
  await sql`
    insert into notifications (id, alert_id, event_id, channel, destination, payload, status, created_at, updated_at)
    select 'ntf_' || e.id, e.alert_id, e.id, 'webhook', 'https://hooks.example/x', '{}'::jsonb, 'delivered', e.created_at, e.created_at
    from alert_events e`;
  await sql`
    insert into deleted_notifications (id, alert_id, event_id, channel, destination, payload, status, attempt_count, created_at, updated_at)
    select 'ntf_' || e.id, e.alert_id, e.id, 'webhook', 'https://hooks.example/x', '{}'::jsonb, 'delivered', 1, e.created_at, e.created_at
    from deleted_alert_events e`;
  // As autovacuum leaves tables that stopped growing: analyzed, their pages all visible.
  for (const table of ["alert_events", "deleted_alert_events", "notifications", "deleted_notifications", "transactions", "alerts", "deleted_alerts"]) {
    await sql`vacuum analyze ${sql(table)}`;
  }
});
afterAll(async () => {
  await sql?.end();
  await database?.drop();
});

/** The wallet's events as the export must list them, straight from the tables. */
async function everyEvent(window: { since?: string; until?: string } = {}): Promise<string[]> {
  const rows = await sql<{ id: string }[]>`
    select id from (
      select e.id, e.created_at from alert_events e join alerts a on a.id = e.alert_id where a.wallet_id = 'wal_w'
      union all
      select e.id, e.created_at from deleted_alert_events e join deleted_alerts d on d.id = e.alert_id where d.wallet_id = 'wal_w'
    ) events
    where created_at >= coalesce(${window.since ?? null}::timestamptz, '-infinity') and created_at < coalesce(${window.until ?? null}::timestamptz, 'infinity')
    order by created_at, id`;
  return rows.map((row) => row.id);
}

describe("a page of a wallet's export", () => {
  it("lists every event once, in (createdAt, eventId) order, through instants shared by several events of one alert and of a live and a deleted alert", async () => {
    const window = { since: "2026-11-01T02:00:00Z", until: "2026-11-01T05:00:00Z" };
    const expected = await everyEvent(window);
    // 180 evaluations of 5 alerts, 18 of them batches of 4 more events.
    expect(expected).toHaveLength(180 * 5 + 18 * 4);
    for (const limit of [1, 3, 7]) {
      const read: string[] = [];
      let after: string | undefined;
      for (;;) {
        const page = await listWalletEvents(sql, "alice", "wal_w", { limit, after }, window);
        expect(page).toBeDefined();
        read.push(...page!.rows.map((row) => row.eventId));
        if (!page!.hasMore) break;
        after = page!.rows.at(-1)!.eventId;
      }
      expect(read, `limit ${limit}`).toEqual(expected);
    }
  });

  it("reads a page from each alert's index and the page's rows' keys, not the wallet's record", async () => {
    const expected = await everyEvent();
    const after = expected[3_000]!;
    const limit = 50;
    // From each alert at most a page, one more, its last instant's ties (2) and the events of the
    // cursor's instant up to the cursor (3), which the index range reads and the filter drops; and the cursor's row.
    const perTable = (count: number) => count * (limit + 1 + 2 + 3) + 1;
    const reads = async (table: string) =>
      countTableReads(sql, table, async (tx) => {
        const page = await listWalletEvents(tx, "alice", "wal_w", { limit, after });
        expect(page?.rows.map((row) => row.eventId)).toEqual(expected.slice(3_001, 3_001 + limit));
        expect(page?.rows.every((row) => row.notificationId === `ntf_${row.eventId}` && row.blockTime !== null)).toBe(true);
      });
    const live = await reads("alert_events");
    expect(live.seqScans).toBe(0);
    expect(live.rowsFetchedByIndex).toBeLessThanOrEqual(perTable(LIVE.length));
    const archived = await reads("deleted_alert_events");
    expect(archived.seqScans).toBe(0);
    expect(archived.rowsFetchedByIndex).toBeLessThanOrEqual(perTable(DELETED.length));
    const notifications = await reads("notifications");
    expect(notifications.seqScans).toBe(0);
    expect(notifications.rowsFetchedByIndex).toBeLessThanOrEqual(limit + 1);
    // The archive has no index by event: the page's deleted alerts' archived notifications are read once, not once an event.
    const archivedNotifications = await reads("deleted_notifications");
    expect(archivedNotifications.seqScans).toBe(0);
    expect(archivedNotifications.rowsFetchedByIndex).toBeLessThanOrEqual(DELETED.length * (EVALUATIONS + (2 * EVALUATIONS) / BATCH_EVERY));
    const transactions = await reads("transactions");
    expect(transactions.seqScans).toBe(0);
    expect(transactions.rowsFetchedByIndex).toBeLessThanOrEqual(limit + 1);
  });
});
