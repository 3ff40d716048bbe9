// Recording delivery attempts stays a lookup by notification id however much the
// notifications table grew since the connection first recorded any. A plan made once per
// connection on a small table (a new deployment, or a table autovacuum has not analyzed yet)
// read the whole table on every later record: in npm run bench:delivery, 357 µs of Postgres
// per attempt. The scans are counted by Postgres itself (pg_stat_xact_user_tables).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { recordAttempts, type AttemptRecord } from "../../src/db/queries/deliveries.ts";
import { createDb, type Sql } from "../../src/db/client.ts";
import { createTestDatabase } from "../helpers/db.ts";

let database: Awaited<ReturnType<typeof createTestDatabase>>;
/** The service's own client, with one connection: every statement below shares what it has planned. */
let sql: Sql;

beforeAll(async () => {
  database = await createTestDatabase("delivery-record-plan");
  sql = createDb(database.url, { max: 1 }).sql;
  await sql`insert into tracked_wallets (id, owner, address) values ('wal_plan', 'alice', 'PlanAddress')`;
  await sql`
    insert into alerts (id, owner, wallet_id, condition, threshold, notification_method, webhook_url, webhook_secret)
    values ('alr_plan', 'alice', 'wal_plan', 'large_transfer', 1, 'webhook', 'https://hooks.example/x', 'whsec_plan')`;
});
afterAll(async () => {
  await sql?.end();
  await database?.drop();
});

/** `count` pending notifications ntf_plan_<from>…, each with a payload of about 1 KB. */
async function addNotifications(from: number, count: number): Promise<void> {
  await sql`
    insert into notifications (id, alert_id, channel, destination, payload, status, created_at, updated_at)
    select 'ntf_plan_' || i, 'alr_plan', 'webhook', 'https://hooks.example/x', jsonb_build_object('pad', repeat('x', 1000)),
           'pending', now(), now()
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

describe("recording delivery attempts", () => {
  it("looks notifications up by id after the table grew, not by reading the whole table", async () => {
    // A small table, recorded against more often than Postgres needs to settle on one plan.
    await addNotifications(0, 20);
    for (let i = 0; i < 10; i++) {
      const moved = await recordAttempts(sql, [delivered(`ntf_plan_${i * 2}`), delivered(`ntf_plan_${i * 2 + 1}`)]);
      expect(moved.size).toBe(2);
    }

    await addNotifications(20, 30_000);
    const ids = [20_001, 25_000, 29_999].map((n) => `ntf_plan_${n}`);
    // Counted inside one transaction: the counts of a backend's statements not yet reported
    // (the earlier records among them) show in the view too, so the difference is what counts.
    const scans = await sql.begin(async (tx) => {
      const seqScans = async () => {
        const [row] = await tx<{ scans: number }[]>`
          select seq_scan::int as scans from pg_stat_xact_user_tables where relname = 'notifications'`;
        return row!.scans;
      };
      const before = await seqScans();
      const moved = await recordAttempts(tx as unknown as Sql, ids.map(delivered));
      expect([...moved].sort()).toEqual([...ids].sort());
      return (await seqScans()) - before;
    });
    expect(scans).toBe(0);
  });
});
