// An alert already a day into a run of permanent failures, for tests of what its next failure
// does. A run is dated by its first failure (alerts.failing_since) and goes on only while each
// failure comes within 24 h of the one before, each leaving its notification failed
// (notify/alert-health.ts): failing_since alone, 25 h ago, is one failure 25 h ago, and the next
// failure starts a new run instead of disabling the alert.
import { eq } from "drizzle-orm";
import { insertNotification } from "../../src/db/queries/notifications.ts";
import { alerts, notifications, trackedWallets } from "../../src/db/schema.ts";
import type { NotificationMethod } from "../../src/domain/types.ts";
import { newId } from "../../src/ids.ts";
import type { TestApp } from "./app.ts";
import { samplePayload } from "./delivery.ts";

const HOUR_MS = 3_600_000;

/**
 * Puts the alert `forMs` (25 h unless given) into a run of failures whose latest was an hour
 * ago (a notification of its own, failed then), so that its next counted failure disables it
 * once `forMs` is 24 h or more. `app`'s clock dates both.
 */
export async function failingFor(app: TestApp, alertId: string, forMs = 25 * HOUR_MS): Promise<void> {
  const now = app.deps.now().getTime();
  const [alert] = await app.deps.db
    .select({ walletId: alerts.walletId, address: trackedWallets.address, channel: alerts.notificationMethod, webhookUrl: alerts.webhookUrl, recipient: alerts.recipient })
    .from(alerts)
    .innerJoin(trackedWallets, eq(trackedWallets.id, alerts.walletId))
    .where(eq(alerts.id, alertId));
  if (!alert) throw new Error(`alert ${alertId} not found`);
  const id = newId("ntf");
  const anHourAgo = new Date(now - HOUR_MS);
  await insertNotification(app.deps.sql, {
    id,
    alertId,
    eventId: null,
    channel: alert.channel as NotificationMethod,
    destination: alert.webhookUrl ?? alert.recipient ?? "",
    payload: samplePayload({ alertId, walletId: alert.walletId, address: alert.address }),
    createdAt: anHourAgo,
  });
  await app.deps.db.update(notifications).set({ status: "failed", attemptCount: 1, updatedAt: anHourAgo }).where(eq(notifications.id, id));
  await app.deps.db.update(alerts).set({ failingSince: new Date(now - forMs) }).where(eq(alerts.id, alertId));
}
