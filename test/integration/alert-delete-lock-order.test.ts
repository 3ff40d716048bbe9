// Deleting an alert (or its wallet) while one of its deliveries is being recorded. The delete
// locks the alert, then its notifications (alert-archive.ts). Recording a delivery that ends the
// alert's run of failures, and counting a failure against it, touch the notification and the
// alert too; when they took the notification first, the two sides could each hold what the
// other waited for, and Postgres aborted one of them with a deadlock (40P01): the DELETE
// answered 500, or the record of a whole batch of deliveries rolled back, and every webhook in it
// went out again on its job's retry. Every writer now locks an alert before its notifications.
// Each test stops one side where the circle closed (a lock held on a second connection, or a
// pause in a trigger), starts the other, then lets the first go on. Real API and Postgres.
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Sql } from "../../src/db/client.ts";
import { recordAttempts, type AttemptRecord } from "../../src/db/queries/deliveries.ts";
import { recordPermanentFailure, type DisabledNotice } from "../../src/notify/alert-health.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { archivedAlerts } from "../helpers/alert-archive.ts";
import { alertRow, attemptsOf, seedAlert, seedNotification, type SeededAlert } from "../helpers/delivery.ts";
import { holdTransaction } from "../helpers/held-transaction.ts";
import { installNotificationUpdatePause, waitForLockWaits } from "../helpers/paused-notification-updates.ts";
import { bearer } from "../helpers/seed.ts";

let t: TestApp;
let alice: string;
/** A second connection of the test's own, for the lock that stops one side. */
let holder: Sql;

/** The advisory lock a paused update of a notification waits for. */
const PAUSE = 7_316;

beforeAll(async () => {
  t = await startTestApp("alert-delete-lock-order");
  alice = await t.token("alice");
  holder = postgres(t.config.databaseUrl, { max: 1, onnotice: () => {} });
  await installNotificationUpdatePause(t.deps.sql, PAUSE);
});
afterAll(async () => {
  await holder?.end();
  await t?.close();
});

const HOOK = "http://127.0.0.1:9/hook";

type AlertWithNotification = { alert: SeededAlert; notificationId: string };

/** A webhook alert with one open notification; `failing`: a run of failures under way (failing_since set). */
async function alertWithNotification(failing: boolean): Promise<AlertWithNotification> {
  const alert = await seedAlert(t, { method: "webhook", webhookUrl: HOOK });
  const notificationId = await seedNotification(t, alert, "webhook", HOOK, { enqueue: false });
  if (failing) await t.deps.sql`update alerts set failing_since = now() - interval '1 hour' where id = ${alert.alertId}`;
  return { alert, notificationId };
}

const delivered = (notificationId: string, alertId: string): AttemptRecord => ({
  notificationId,
  alertId,
  destination: HOOK,
  at: new Date(),
  durationMs: 5,
  statusCode: 200,
  error: null,
  responseBody: null,
  status: "delivered",
  nextAttemptAt: null,
});


/**
 * A stalled job's second run recording an attempt of the notification (recordAttempts takes
 * this lock), not committed yet: a DELETE that has locked the alert waits here for the
 * notification, its circle half closed.
 */
const recordingElsewhere = (notificationId: string) =>
  holdTransaction(holder, (tx) => tx`select 1 from notifications where id = ${notificationId} for key share`);

/**
 * The delete first: the DELETE of `url` locks what it deletes and waits for the notification
 * (its record held elsewhere), then `next` (`what`) starts and waits too, then the held record
 * ends. The DELETE's answer and what `next` returned, once both are done.
 */
async function deleteFirstThen<T>(url: string, doomed: AlertWithNotification, what: string, next: () => Promise<T>) {
  const release = await recordingElsewhere(doomed.notificationId);
  try {
    const deleting = t.app.inject({ method: "DELETE", url, headers: bearer(alice) });
    await waitForLockWaits(t.deps.sql, 1, `the DELETE of ${url} to lock what it deletes and wait for the notification`);
    const following = next();
    await waitForLockWaits(t.deps.sql, 2, `${what} to wait too`);
    await release();
    return await Promise.all([deleting, following]);
  } finally {
    await release();
  }
}

/**
 * One batch for both alerts' deliveries, as a worker's concurrent jobs share one statement: a
 * rolled-back record leaves the other alert's delivery open, and its job sends that webhook again.
 */
const recordBoth = (doomed: AlertWithNotification, other: AlertWithNotification) =>
  recordAttempts(t.deps.sql, [delivered(doomed.notificationId, doomed.alert.alertId), delivered(other.notificationId, other.alert.alertId)]);

async function archivedNotification(notificationId: string) {
  const [row] = await t.deps.sql<{ status: string; attempts: number }[]>`
    select n.status, (select count(*)::int from deleted_delivery_attempts d where d.notification_id = n.id) as attempts
    from deleted_notifications n where n.id = ${notificationId}`;
  return row;
}

describe("a DELETE of an alert while a delivery that ends its run of failures is recorded", () => {
  it("answers 204 when the delete came first; the record waits, then records the rest of its batch and nothing of the deleted alert", async () => {
    const doomed = await alertWithNotification(true);
    const other = await alertWithNotification(true);
    const [deleted, recorded] = await deleteFirstThen(`/v1/risk/alerts/${doomed.alert.alertId}`, doomed, "the record", () => recordBoth(doomed, other));
    expect(deleted.statusCode).toBe(204);
    expect(recorded).toEqual(new Set([other.notificationId]));
    const [otherNotification] = await t.deps.sql`select status from notifications where id = ${other.notificationId}`;
    expect(otherNotification).toEqual({ status: "delivered" });
    expect(await attemptsOf(t, other.notificationId)).toHaveLength(1);
    expect((await alertRow(t, other.alert.alertId)).failingSince).toBeNull();
    // Recorded after the delete: that send is on no record (alert-archive.ts).
    expect(await archivedNotification(doomed.notificationId)).toEqual({ status: "pending", attempts: 0 });
  });

  it("answers 204 when the record came first; the delete waits, then archives the delivery and the run ended", async () => {
    const doomed = await alertWithNotification(true);
    const other = await alertWithNotification(true);
    await t.deps.sql`insert into paused_notification_updates values (${doomed.notificationId})`;
    const release = await holdTransaction(holder, (tx) => tx`select pg_advisory_xact_lock(${PAUSE})`);
    try {
      const recording = recordBoth(doomed, other);
      await waitForLockWaits(t.deps.sql, 1, "the record to pause on writing the notification");
      const deleting = t.app.inject({ method: "DELETE", url: `/v1/risk/alerts/${doomed.alert.alertId}`, headers: bearer(alice) });
      await waitForLockWaits(t.deps.sql, 2, "the DELETE to wait on the record");
      await release();

      const [recorded, deleted] = await Promise.all([recording, deleting]);
      expect(recorded).toEqual(new Set([doomed.notificationId, other.notificationId]));
      expect(deleted.statusCode).toBe(204);
    } finally {
      await release();
    }
    expect(await archivedNotification(doomed.notificationId)).toEqual({ status: "delivered", attempts: 1 });
    const [archived] = await archivedAlerts(t, [doomed.alert.alertId]);
    expect(archived?.settings).toMatchObject({ failing_since: null });
  });
});

describe("a DELETE of a wallet while a delivery that ends its alert's run of failures is recorded", () => {
  it("answers 204 when the delete came first; the record waits, then records the rest of its batch", async () => {
    const doomed = await alertWithNotification(true);
    const other = await alertWithNotification(true);
    const [deleted, recorded] = await deleteFirstThen(`/v1/wallets/${doomed.alert.walletId}`, doomed, "the record", () => recordBoth(doomed, other));
    expect(deleted.statusCode).toBe(204);
    expect(recorded).toEqual(new Set([other.notificationId]));
    expect(await attemptsOf(t, other.notificationId)).toHaveLength(1);
    expect(await archivedNotification(doomed.notificationId)).toEqual({ status: "pending", attempts: 0 });
  });
});

describe("a DELETE of an alert while a permanent failure of its notification is counted", () => {
  it("answers 204 when the delete came first; the count waits, then finds no alert and counts nothing", async () => {
    const doomed = await alertWithNotification(false);
    const notices: DisabledNotice[] = [];
    const health = { sql: t.deps.sql, logger: t.deps.logger, enqueueNotice: async (notice: DisabledNotice) => void notices.push(notice) };
    const countFailure = () =>
      recordPermanentFailure(health, { alertId: doomed.alert.alertId, notificationId: doomed.notificationId, gone: true, error: "HTTP 410", now: new Date() });
    const [deleted, disabled] = await deleteFirstThen(`/v1/risk/alerts/${doomed.alert.alertId}`, doomed, "the count", countFailure);
    expect(deleted.statusCode).toBe(204);
    expect(disabled).toBe(false);
    expect(notices).toEqual([]);
    const [archived] = await archivedAlerts(t, [doomed.alert.alertId]);
    expect(archived?.settings).toMatchObject({ status: "active", failing_since: null });
  });
});
