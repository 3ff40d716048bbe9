// Two delivery batches recording the same notifications at once: a stalled job's second run
// beside its first, each in a batch of its worker. Each batch locked the notifications in the
// order its update reached them, so two batches listing them in other orders could each hold
// one the other waited for, and Postgres ended one with a deadlock (40P01): that batch rolled
// back, and every other delivery recorded in it went out again on its job's retry. The
// record now locks its notifications in id order first. The test stops the first batch, by a
// trigger, while it writes its first notification, starts the second in the other order, then
// lets the first go on. Real Postgres.
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Sql } from "../../src/db/client.ts";
import { recordAttempts, type AttemptRecord } from "../../src/db/queries/deliveries.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { attemptsOf, seedAlert, seedNotification } from "../helpers/delivery.ts";
import { holdTransaction } from "../helpers/held-transaction.ts";
import { installNotificationUpdatePause, waitForLockWaits } from "../helpers/paused-notification-updates.ts";

let t: TestApp;
/** A second connection of the test's own, for the lock that pauses the first batch. */
let holder: Sql;
/**
 * The batches' connections, planning as on a table of many notifications: each update reaches
 * its notifications through the primary key, in the order of its input. On this test's tiny
 * table Postgres reads it whole instead, in the same order for both batches.
 */
let recorder: Sql;

/** The advisory lock a paused update of a notification waits for. */
const PAUSE = 7_317;

beforeAll(async () => {
  t = await startTestApp("record-attempts-lock-order");
  holder = postgres(t.config.databaseUrl, { max: 1, onnotice: () => {} });
  recorder = postgres(t.config.databaseUrl, {
    max: 2,
    onnotice: () => {},
    connection: { enable_seqscan: "off", enable_hashjoin: "off", enable_mergejoin: "off" },
  });
  await installNotificationUpdatePause(t.deps.sql, PAUSE);
});
afterAll(async () => {
  await holder?.end();
  await recorder?.end();
  await t?.close();
});

const HOOK = "http://127.0.0.1:9/hook";

const attempt = (notificationId: string, alertId: string, status: "delivered" | "retrying"): AttemptRecord => ({
  notificationId,
  alertId,
  destination: HOOK,
  at: new Date(),
  durationMs: 5,
  statusCode: status === "delivered" ? 200 : 503,
  error: status === "delivered" ? null : "HTTP 503",
  responseBody: null,
  status,
  nextAttemptAt: status === "delivered" ? null : new Date(Date.now() + 60_000),
});


describe("two batches recording the same notifications in opposite orders", () => {
  it("both complete: the second waits for the first instead of closing a deadlock, and each records its attempts", async () => {
    const alert = await seedAlert(t, { method: "webhook", webhookUrl: HOOK });
    const ids = [
      await seedNotification(t, alert, "webhook", HOOK, { enqueue: false }),
      await seedNotification(t, alert, "webhook", HOOK, { enqueue: false }),
    ].sort();
    const [low, high] = ids as [string, string];
    // The first batch pauses on writing `low`, its first, so it holds `low` and not yet `high`
    // when the second batch (high first) begins.
    await t.deps.sql`insert into paused_notification_updates values (${low})`;
    const release = await holdTransaction(holder, (tx) => tx`select pg_advisory_xact_lock(${PAUSE})`);
    try {
      const first = recordAttempts(recorder, [attempt(low, alert.alertId, "retrying"), attempt(high, alert.alertId, "retrying")]);
      await waitForLockWaits(t.deps.sql, 1, "the first batch to pause on writing its first notification");
      const second = recordAttempts(recorder, [attempt(high, alert.alertId, "delivered"), attempt(low, alert.alertId, "delivered")]);
      await waitForLockWaits(t.deps.sql, 2, "the second batch to wait");
      await t.deps.sql`delete from paused_notification_updates`;
      await release();
      const [firstMoved, secondMoved] = await Promise.all([first, second]);
      expect(firstMoved).toEqual(new Set(ids));
      expect(secondMoved).toEqual(new Set(ids));
    } finally {
      await release();
    }
    const rows = await t.deps.sql<{ status: string; attempts: number }[]>`
      select status, attempt_count as attempts from notifications where id = any(${ids}) order by id`;
    expect(rows).toEqual([
      { status: "delivered", attempts: 2 },
      { status: "delivered", attempts: 2 },
    ]);
    for (const id of ids) expect(await attemptsOf(t, id)).toHaveLength(2);
  });
});
