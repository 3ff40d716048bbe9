// DELETE /v1/wallets/{id} takes the wallet's alerts with it, and keeps their record: each alert
// (without its webhook secret), its events, notifications and delivery attempts are archived in
// the transaction that deletes them, as 'wallet deleted'. Another caller's delete takes nothing.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestApp } from "../helpers/app.ts";
import {
  archivedAlerts,
  archivedRecord,
  archiveSize,
  createArchivableAlert,
  fireTwiceSecondOwed,
  liveRecord,
  notificationsOf,
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

beforeAll(async () => {
  rig = await startArchiveRig("alert-archive-wallet");
  ({ t, alice, bob } = rig);
});
afterAll(async () => {
  await rig?.close();
});

/**
 * Alice's wallet with two alerts that fired twice through the pipeline: a webhook alert (its
 * first notification delivered, its second refused once and owed) and an email alert (both sent).
 */
async function walletWithTwoFiredAlerts() {
  const wallet = await track(t, alice);
  const route = rig.newRoute();
  const webhook = await createArchivableAlert(t, alice, wallet, { route });
  const email = await createArchivableAlert(t, alice, wallet, { email: "compliance@example.com" });
  await fireTwiceSecondOwed(t, alice, webhook, route);
  await notificationsOf(t, email.alertId, 2, (rows) => rows.every((row) => row.status === "delivered"));
  return { ...wallet, route, webhook, email, alertIds: [webhook.alertId, email.alertId].sort() };
}

const deleteWallet = (walletId: string, token = alice) =>
  t.app.inject({ method: "DELETE", url: `/v1/wallets/${walletId}`, headers: bearer(token) });

describe("DELETE /v1/wallets/{id}", () => {
  it("archives both of the wallet's alerts without the secret, with every event, notification and attempt, as deleted with the wallet", async () => {
    const wallet = await walletWithTwoFiredAlerts();
    const other = await walletWithTwoFiredAlerts();
    const before = await liveRecord(t, wallet.alertIds);
    expect([before.events.length, before.notifications.length, before.attempts.length]).toEqual([4, 4, 4]);
    const otherBefore = await liveRecord(t, other.alertIds);

    expect((await deleteWallet(wallet.walletId)).statusCode).toBe(204);

    expect((await t.app.inject({ url: `/v1/wallets/${wallet.walletId}`, headers: bearer(alice) })).statusCode).toBe(404);
    for (const alertId of wallet.alertIds) {
      expect((await t.app.inject({ url: `/v1/risk/alerts/${alertId}`, headers: bearer(alice) })).statusCode).toBe(404);
    }
    expect(await liveRecord(t, wallet.alertIds)).toEqual({ events: [], notifications: [], attempts: [] });

    expect(await archivedRecord(t, wallet.alertIds)).toEqual(before);
    const archived = await archivedAlerts(t, wallet.alertIds);
    expect(archived.map((alert) => alert.id)).toEqual(wallet.alertIds);
    for (const alert of archived) {
      expect(alert).toMatchObject({
        owner: "alice",
        walletId: wallet.walletId,
        walletAddress: wallet.address,
        condition: "large_transfer",
        deletedBy: "alice",
        reason: "wallet deleted",
      });
    }
    const settings = Object.fromEntries(archived.map((alert) => [alert.id, alert.settings]));
    expect(settings[wallet.webhook.alertId]).toMatchObject({ notification_method: "webhook", webhook_url: wallet.route.url, threshold: 1_000 });
    expect(settings[wallet.email.alertId]).toMatchObject({ notification_method: "email", recipient: "compliance@example.com", threshold: 1_000 });
    expect(await wholeArchiveText(t)).not.toContain(wallet.webhook.secret!);

    // The other wallet's alerts are neither archived nor touched.
    expect(await archivedAlerts(t, other.alertIds)).toEqual([]);
    expect(await liveRecord(t, other.alertIds)).toEqual(otherBefore);
  });

  it("archives and deletes nothing when another caller deletes the wallet", async () => {
    const wallet = await walletWithTwoFiredAlerts();
    const before = await liveRecord(t, wallet.alertIds);
    const archiveBefore = await archiveSize(t);

    expect((await deleteWallet(wallet.walletId, bob)).statusCode).toBe(404);

    expect((await t.app.inject({ url: `/v1/wallets/${wallet.walletId}`, headers: bearer(alice) })).statusCode).toBe(200);
    expect(await liveRecord(t, wallet.alertIds)).toEqual(before);
    expect(await archiveSize(t)).toBe(archiveBefore);
  });

  it("archives nothing for a wallet without alerts, and deletes it", async () => {
    const wallet = await track(t, alice);
    const archiveBefore = await archiveSize(t);

    expect((await deleteWallet(wallet.walletId)).statusCode).toBe(204);

    expect((await t.app.inject({ url: `/v1/wallets/${wallet.walletId}`, headers: bearer(alice) })).statusCode).toBe(404);
    expect(await archiveSize(t)).toBe(archiveBefore);
  });
});
