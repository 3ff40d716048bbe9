// The archive holds everything the delete removes, also what another session writes while the
// delete runs: an attempt recorded, an event recorded, an alert created on the wallet, each in a
// transaction that commits while the DELETE waits on its locks. Each of them is archived, none
// deleted unarchived (the cascade would take it without a trace). Real API and Postgres, the
// concurrent write held open on a second session.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { archivedAlerts, archivedRecord, liveRecord } from "../helpers/alert-archive.ts";
import { seedAlert, seedNotification } from "../helpers/delivery.ts";
import { holdTransaction, waitForALockWait } from "../helpers/held-transaction.ts";
import { bearer } from "../helpers/seed.ts";
import { newId } from "../../src/ids.ts";

let t: TestApp;
let alice: string;

beforeAll(async () => {
  t = await startTestApp("alert-archive-races");
  alice = await t.token("alice");
});
afterAll(async () => {
  await t?.close();
});

const alertRecordCount = async (alertId: string) => {
  const record = await archivedRecord(t, [alertId]);
  return [record.events.length, record.notifications.length, record.attempts.length];
};

describe("a delete racing a write that commits while it waits", () => {
  it("archives a delivery attempt recorded meanwhile", async () => {
    const alert = await seedAlert(t, { method: "webhook", webhookUrl: "http://127.0.0.1:9/hook" });
    const notificationId = await seedNotification(t, alert, "webhook", "http://127.0.0.1:9/hook", { enqueue: false });
    // As recordAttempts does: a key-share lock on the notification, then the attempt and the notification's new state.
    const release = await holdTransaction(t.deps.sql, async (tx) => {
      await tx`select 1 from notifications where id = ${notificationId} for key share`;
      await tx`insert into delivery_attempts (notification_id, at, duration_ms, status_code) values (${notificationId}, now(), 5, 200)`;
      await tx`update notifications set status = 'delivered', attempt_count = 1, delivered_at = now() where id = ${notificationId}`;
    });

    const deleting = t.app.inject({ method: "DELETE", url: `/v1/risk/alerts/${alert.alertId}`, headers: bearer(alice) });
    await waitForALockWait(t.deps.sql);
    await release();
    expect((await deleting).statusCode).toBe(204);

    expect(await alertRecordCount(alert.alertId)).toEqual([0, 1, 1]);
    const [archived] = await t.deps.sql`select status, attempt_count as "attemptCount" from deleted_notifications where id = ${notificationId}`;
    expect(archived).toEqual({ status: "delivered", attemptCount: 1 });
  });

  it("archives an event and its notification recorded meanwhile", async () => {
    const alert = await seedAlert(t, { method: "webhook", webhookUrl: "http://127.0.0.1:9/hook" });
    const eventId = newId("evt");
    const release = await holdTransaction(t.deps.sql, async (tx) => {
      await tx`insert into alert_events (id, alert_id, dedupe_key, condition, observed, reason)
               values (${eventId}, ${alert.alertId}, 'sig-1', 'large_transfer', 25000, 'a transfer of 25,000')`;
      await tx`insert into notifications (id, alert_id, event_id, channel, destination, payload)
               values (${newId("ntf")}, ${alert.alertId}, ${eventId}, 'webhook', 'http://127.0.0.1:9/hook', '{}')`;
    });

    const deleting = t.app.inject({ method: "DELETE", url: `/v1/risk/alerts/${alert.alertId}`, headers: bearer(alice) });
    await waitForALockWait(t.deps.sql);
    await release();
    expect((await deleting).statusCode).toBe(204);

    expect(await alertRecordCount(alert.alertId)).toEqual([1, 1, 0]);
    expect(await liveRecord(t, [alert.alertId])).toEqual({ events: [], notifications: [], attempts: [] });
  });

  it("archives an alert created on the wallet meanwhile, when the wallet is deleted", async () => {
    const alert = await seedAlert(t, { method: "webhook", webhookUrl: "http://127.0.0.1:9/hook" });
    const lateAlertId = newId("alr");
    const release = await holdTransaction(t.deps.sql, async (tx) => {
      await tx`insert into alerts (id, owner, wallet_id, condition, threshold, notification_method, webhook_url)
               values (${lateAlertId}, 'alice', ${alert.walletId}, 'large_transfer', 10, 'webhook', 'http://127.0.0.1:9/hook')`;
    });

    const deleting = t.app.inject({ method: "DELETE", url: `/v1/wallets/${alert.walletId}`, headers: bearer(alice) });
    await waitForALockWait(t.deps.sql);
    await release();
    expect((await deleting).statusCode).toBe(204);

    const archived = await archivedAlerts(t, [alert.alertId, lateAlertId]);
    expect(archived.map((row) => row.id).sort()).toEqual([alert.alertId, lateAlertId].sort());
    expect(archived.every((row) => row.reason === "wallet deleted")).toBe(true);
  });
});
