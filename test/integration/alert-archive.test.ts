// DELETE /v1/risk/alerts/{id} keeps the record of what the alert fired and what was sent: the
// alert (without its webhook secret), its events, notifications and delivery attempts are copied
// into the archive tables in the transaction that deletes them. The API still answers as before:
// the alert is gone, and a notification it still owed is not sent.
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestApp } from "../helpers/app.ts";
import {
  archivedAlerts,
  archivedRecord,
  archiveSize,
  createArchivableAlert,
  fireTwiceSecondOwed,
  liveRecord,
  parkedJob,
  startArchiveRig,
  wholeArchiveText,
  type ArchiveRig,
} from "../helpers/alert-archive.ts";
import { track } from "../helpers/pipeline.ts";
import { bearer } from "../helpers/seed.ts";

let rig: ArchiveRig;
let t: TestApp;
let alice: string;
let bob: string;

const README = readFileSync(new URL("../../README.md", import.meta.url), "utf8");
const RISK_ALERTS = README.slice(README.indexOf("### Risk alerts"), README.indexOf("## Alert conditions"));

/** The statements of the README's ```sql block (Risk alerts) that starts with `-- <marker>:`, for the alert `alertId`. */
function documentedSql(marker: string, alertId = ""): string[] {
  const block = [...RISK_ALERTS.matchAll(/```sql\n([\s\S]*?)```/g)].map((match) => match[1]!).find((sql) => sql.startsWith(`-- ${marker}:`));
  if (block === undefined) throw new Error(`the README's Risk alerts section has no sql block starting "-- ${marker}:"`);
  return block
    .replaceAll("alr_…", alertId)
    .split(/;\s*$/m)
    .map((statement) => statement.trim())
    .filter((statement) => statement.replace(/^--.*$/gm, "").trim() !== "");
}

beforeAll(async () => {
  rig = await startArchiveRig("alert-archive");
  ({ t, alice, bob } = rig);
});
afterAll(async () => {
  await rig?.close();
});

/**
 * Alice's webhook alert after two firings through the pipeline: the first notification
 * delivered (200), the second refused once (503) and owed, its retry an hour away.
 */
async function alertThatFiredTwice() {
  const route = rig.newRoute();
  const alert = await createArchivableAlert(t, alice, await track(t, alice), { route });
  const [, owed] = await fireTwiceSecondOwed(t, alice, alert, route);
  expect(route.requests).toHaveLength(2);
  return { ...alert, route, owedId: owed!.id };
}

const deleteAlert = (alertId: string, token = alice) =>
  t.app.inject({ method: "DELETE", url: `/v1/risk/alerts/${alertId}`, headers: bearer(token) });

describe("DELETE /v1/risk/alerts/{id}", () => {
  it("archives the alert without its secret, with every event, notification and attempt, who deleted it and why", async () => {
    const alert = await alertThatFiredTwice();
    const before = await liveRecord(t, [alert.alertId]);
    expect([before.events.length, before.notifications.length, before.attempts.length]).toEqual([2, 2, 2]);

    const res = await deleteAlert(alert.alertId);
    expect(res.statusCode).toBe(204);

    expect((await t.app.inject({ url: `/v1/risk/alerts/${alert.alertId}`, headers: bearer(alice) })).statusCode).toBe(404);
    expect((await t.app.inject({ url: `/v1/risk/alerts/${alert.alertId}/events`, headers: bearer(alice) })).statusCode).toBe(404);
    expect(await liveRecord(t, [alert.alertId])).toEqual({ events: [], notifications: [], attempts: [] });

    expect(await archivedRecord(t, [alert.alertId])).toEqual(before);
    const [archived] = await archivedAlerts(t, [alert.alertId]);
    expect(archived).toMatchObject({
      id: alert.alertId,
      owner: "alice",
      walletId: alert.walletId,
      walletAddress: alert.address,
      condition: "large_transfer",
      deletedBy: "alice",
      reason: "alert deleted",
    });
    expect(archived!.settings).toMatchObject({
      threshold: 1_000,
      notification_method: "webhook",
      webhook_url: alert.route.url,
      status: "active",
      cooldown_seconds: 0,
    });
    expect(archived!.settings).not.toHaveProperty("webhook_secret");
    expect(archived!.settings).not.toHaveProperty("previous_webhook_secrets");
    expect(alert.secret).toMatch(/^whsec_/);
    expect(await wholeArchiveText(t)).not.toContain(alert.secret);
    const notification = await t.app.inject({ url: `/v1/notifications/${alert.owedId}`, headers: bearer(alice) });
    expect(notification.statusCode).toBe(404);
  });

  it("does not send a notification the deleted alert still owed when its retry comes due", async () => {
    const alert = await alertThatFiredTwice();
    const job = await parkedJob(t, alert.owedId);

    expect((await deleteAlert(alert.alertId)).statusCode).toBe(204);
    // The job finds no notification to send: a quiet no-op, as before there was an archive.
    expect(await job.runNow()).toBe("completed");

    expect(alert.route.requests).toHaveLength(2);
    // Archived as it stood: retrying, after its one attempt (attempt_count counts the retry
    // schedule's steps: retry-steps.ts; the attempts are the archived attempts' rows).
    const [owed] = await t.deps.sql<{ status: string; attempts: number }[]>`
      select status, (select count(*)::int from deleted_delivery_attempts d where d.notification_id = n.id) as attempts
      from deleted_notifications n where id = ${alert.owedId}`;
    expect(owed).toEqual({ status: "retrying", attempts: 1 });
  });

  it("archives and deletes nothing when another caller deletes the alert, or when the alert does not exist", async () => {
    const alert = await alertThatFiredTwice();
    const before = await liveRecord(t, [alert.alertId]);
    const archiveBefore = await archiveSize(t);

    expect((await deleteAlert(alert.alertId, bob)).statusCode).toBe(404);
    expect((await deleteAlert("alr_missing")).statusCode).toBe(404);

    expect((await t.app.inject({ url: `/v1/risk/alerts/${alert.alertId}`, headers: bearer(alice) })).statusCode).toBe(200);
    expect(await liveRecord(t, [alert.alertId])).toEqual(before);
    expect(await archiveSize(t)).toBe(archiveBefore);
  });
});

describe("a delete that does not archive", () => {
  it("is refused by the database: a plain delete of the wallet or the alert fails and the whole record stays", async () => {
    const alert = await alertThatFiredTwice();
    const before = await liveRecord(t, [alert.alertId]);
    const archiveBefore = await archiveSize(t);

    // A cleanup script's or a support session's SQL, past the API (which archives first).
    await expect(t.deps.sql`delete from tracked_wallets where id = ${alert.walletId}`).rejects.toThrow(/is not archived/);
    await expect(t.deps.sql`delete from alerts where id = ${alert.alertId}`).rejects.toThrow(/is not archived/);

    expect(await liveRecord(t, [alert.alertId])).toEqual(before);
    expect(await archiveSize(t)).toBe(archiveBefore);
    // The API's own delete still goes through.
    expect((await deleteAlert(alert.alertId)).statusCode).toBe(204);
    expect(await archivedRecord(t, [alert.alertId])).toEqual(before);
  });
});

describe("the README's SQL for the archive", () => {
  it("reads a deleted alert, its events, and its notifications with each attempt's answer", async () => {
    const alert = await alertThatFiredTwice();
    expect((await deleteAlert(alert.alertId)).statusCode).toBe(204);

    const [alerts, events, sent] = await Promise.all(documentedSql("Read", alert.alertId).map((statement) => t.deps.sql.unsafe(statement)));
    expect(alerts!.map((row) => [row.id, row.deleted_by, row.reason])).toEqual([[alert.alertId, "alice", "alert deleted"]]);
    expect(events!.map((row) => Number(row.observed))).toEqual([2_500, 3_000]);
    expect(sent!.map((row) => [row.status, row.status_code])).toEqual([
      ["delivered", 200],
      ["retrying", 503],
    ]);
  });

  it("prunes the whole record of the alerts deleted before the cut-off, and keeps the others'", async () => {
    const old = await alertThatFiredTwice();
    const recent = await alertThatFiredTwice();
    for (const alert of [old, recent]) expect((await deleteAlert(alert.alertId)).statusCode).toBe(204);
    await t.deps.sql`update deleted_alerts set deleted_at = now() - interval '8 years' where id = ${old.alertId}`;
    const recentRecord = await archivedRecord(t, [recent.alertId]);

    const [prune] = documentedSql("Prune");
    await t.deps.sql.unsafe(prune!);

    expect(await archivedAlerts(t, [old.alertId])).toEqual([]);
    expect(await archivedRecord(t, [old.alertId])).toEqual({ events: [], notifications: [], attempts: [] });
    const [orphans] = await t.deps.sql<{ n: number }[]>`
      select count(*)::int as n from deleted_delivery_attempts d
      where not exists (select 1 from deleted_notifications n where n.id = d.notification_id)`;
    expect(orphans!.n).toBe(0);
    expect(await archivedAlerts(t, [recent.alertId])).toHaveLength(1);
    expect(await archivedRecord(t, [recent.alertId])).toEqual(recentRecord);
  });
});
