// A delivery attempt is recorded whatever text its peer answered with: jsonb, which carries
// the attempts to Postgres, holds neither U+0000 nor half a surrogate pair, and a statement that
// failed on one attempt's text failed every attempt recorded with it, to be sent again.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { recordAttempts, type AttemptRecord } from "../../src/db/queries/deliveries.ts";
import { createDb, type Sql } from "../../src/db/client.ts";
import { createTestDatabase } from "../helpers/db.ts";

let database: Awaited<ReturnType<typeof createTestDatabase>>;
let sql: Sql;

beforeAll(async () => {
  database = await createTestDatabase("delivery-record-text");
  sql = createDb(database.url, { max: 1 }).sql;
  await sql`insert into tracked_wallets (id, owner, address) values ('wal_text', 'alice', 'TextAddress')`;
  await sql`
    insert into alerts (id, owner, wallet_id, condition, threshold, notification_method, recipient)
    values ('alr_text', 'alice', 'wal_text', 'large_transfer', 1, 'email', 'desk@example.com')`;
  await sql`
    insert into notifications (id, alert_id, channel, destination, payload, status, created_at, updated_at)
    select 'ntf_text_' || i, 'alr_text', 'email', 'desk@example.com', '{}'::jsonb, 'pending', now(), now()
    from generate_series(1, 3) as i`;
});
afterAll(async () => {
  await sql?.end();
  await database?.drop();
});

const attempt = (id: string, error: string, responseBody: string): AttemptRecord => ({
  notificationId: id,
  alertId: "alr_text",
  destination: "desk@example.com",
  at: new Date(),
  durationMs: 5,
  statusCode: null,
  error,
  responseBody,
  status: "retrying",
  nextAttemptAt: new Date(Date.now() + 60_000),
});

describe("recording attempts", () => {
  it("records, beside a plain one, an attempt whose text was cut inside a surrogate pair and one holding a NUL", async () => {
    // An SMTP reply cut at its 1,000th UTF-16 unit, between the two halves of an emoji.
    const cut = `451 ${"x".repeat(995)}🚨`.slice(0, 1000);
    expect(cut.at(-1)).toBe("\uD83D");
    const moved = await recordAttempts(sql, [
      attempt("ntf_text_1", cut, "\uDEA8 a low half alone"),
      attempt("ntf_text_2", "421 busy\u0000", "ok\u0000"),
      attempt("ntf_text_3", "421 busy 🚨", "fine"),
    ]);
    expect([...moved].sort()).toEqual(["ntf_text_1", "ntf_text_2", "ntf_text_3"]);
    const rows = await sql<{ id: string; error: string; body: string }[]>`
      select notification_id as id, error, response_body as body from delivery_attempts order by notification_id`;
    expect(rows).toEqual([
      { id: "ntf_text_1", error: `${cut.slice(0, -1)}\uFFFD`, body: "\uFFFD a low half alone" },
      { id: "ntf_text_2", error: "421 busy", body: "ok" },
      { id: "ntf_text_3", error: "421 busy 🚨", body: "fine" },
    ]);
  });
});
