// Recording delivery attempts, and closing a disabled alert's notifications, stay lookups by
// notification id whatever Postgres believed of the notifications table when it planned them.
// Two beliefs went wrong under a burst (npm run bench:delivery): a plan made once per
// connection on a small table read the whole table on every record as it grew, and a plan made
// while few notifications were open (as after any quiet spell) read every open one through the
// open index to reach the few it wanted. What a statement read is counted by Postgres itself
// (pg_stat_xact_user_tables).
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { recordAttempts, type AttemptRecord } from "../../src/db/queries/deliveries.ts";
import { failWithoutAttempt } from "../../src/db/queries/notifications.ts";
import { createDb, type Sql } from "../../src/db/client.ts";
import { createTestDatabase } from "../helpers/db.ts";
import { countTableReads, type TableReads } from "../helpers/table-reads.ts";

let database: Awaited<ReturnType<typeof createTestDatabase>>;
/** The service's own client, with one connection: every statement below shares what it has planned. */
let sql: Sql;

beforeEach(async () => {
  database = await createTestDatabase("delivery-record-plan");
  sql = createDb(database.url, { max: 1 }).sql;
  await sql`insert into tracked_wallets (id, owner, address) values ('wal_plan', 'alice', 'PlanAddress')`;
  await sql`
    insert into alerts (id, owner, wallet_id, condition, threshold, notification_method, webhook_url, webhook_secret)
    values ('alr_plan', 'alice', 'wal_plan', 'large_transfer', 1, 'webhook', 'https://hooks.example/x', 'whsec_plan')`;
});
afterEach(async () => {
  await sql?.end();
  await database?.drop();
});

/** `count` notifications ntf_plan_<from>…, each with a payload of about 1 KB. */
async function addNotifications(from: number, count: number, status: "pending" | "delivered" = "pending"): Promise<void> {
  await sql`
    insert into notifications (id, alert_id, channel, destination, payload, status, created_at, updated_at)
    select 'ntf_plan_' || i, 'alr_plan', 'webhook', 'https://hooks.example/x', jsonb_build_object('pad', repeat('x', 1000)),
           ${status}, now(), now()
    from generate_series(${from}::int, ${from + count - 1}::int) as i`;
}

const delivered = (id: string): AttemptRecord => ({
  notificationId: id,
  alertId: "alr_plan",
  destination: "https://hooks.example/x",
  at: new Date(),
  durationMs: 12,
  statusCode: 200,
  error: null,
  responseBody: "ok",
  status: "delivered",
  nextAttemptAt: null,
});

/** Records a delivery of each of `ids` and says what Postgres read of notifications meanwhile. */
function recordAndCountReads(ids: string[]): Promise<TableReads> {
  return countTableReads(sql, "notifications", async (tx) => {
    const moved = await recordAttempts(tx, ids.map(delivered));
    expect([...moved].sort()).toEqual([...ids].sort());
  });
}

/** A quiet spell (everything delivered, and autovacuum's analyze has seen it so), then a burst of 5,000 open. */
async function burstAfterQuietSpell(): Promise<void> {
  await addNotifications(0, 20_000, "delivered");
  await sql`analyze notifications`;
  await addNotifications(20_000, 5_000);
}

describe("recording delivery attempts", () => {
  it("looks notifications up by id after the table grew, not by reading the whole table", async () => {
    // A small table, recorded against more often than Postgres needs to settle on one plan.
    await addNotifications(0, 20);
    for (let i = 0; i < 10; i++) {
      const moved = await recordAttempts(sql, [delivered(`ntf_plan_${i * 2}`), delivered(`ntf_plan_${i * 2 + 1}`)]);
      expect(moved.size).toBe(2);
    }
    await addNotifications(20, 30_000);

    const reads = await recordAndCountReads([20_001, 25_000, 29_999].map((n) => `ntf_plan_${n}`));
    expect(reads.seqScans).toBe(0);
  });

  it("looks notifications up by id when a burst opened thousands after a quiet spell, not through every open one", async () => {
    await burstAfterQuietSpell();
    const ids = [20_001, 22_500, 24_999].map((n) => `ntf_plan_${n}`);
    const reads = await recordAndCountReads(ids);
    expect(reads.seqScans).toBe(0);
    // Each recorded notification is read a few times (locked, then updated), not the 5,000 open.
    expect(reads.rowsFetchedByIndex).toBeLessThanOrEqual(ids.length * 4);
  });

  it("closes an open notification of a disabled alert by id during a burst, not through every open one", async () => {
    await burstAfterQuietSpell();
    const reads = await countTableReads(sql, "notifications", (tx) => failWithoutAttempt(tx, "ntf_plan_22222", new Date()));
    expect(reads.seqScans).toBe(0);
    expect(reads.rowsFetchedByIndex).toBeLessThanOrEqual(2);
    const [row] = await sql<{ status: string }[]>`select status from notifications where id = 'ntf_plan_22222'`;
    expect(row!.status).toBe("failed");
  });
});
