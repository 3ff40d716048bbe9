// Replaced webhook secrets sign for 24 h after a rotation, then no more; the maintenance sweep
// then drops them from the alert row, where they sat in plain text until the next rotation.
// Real PostgreSQL and Redis, through the maintenance queue's processor.
import type { Job } from "bullmq";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { alerts, type PreviousSecret } from "../../src/db/schema.ts";
import { generateWebhookSecret } from "../../src/notify/webhook-secret.ts";
import { DROP_EXPIRED_SECRETS_EVERY_MS, sweepExpiredSecrets } from "../../src/queue/expired-secrets-sweep.ts";
import { makeReconcileProcessor } from "../../src/queue/jobs/reconcile.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { alertRow, seedAlert } from "../helpers/delivery.ts";

let t: TestApp;

beforeAll(async () => {
  t = await startTestApp("expired-webhook-secrets");
});
afterAll(async () => {
  await t?.close();
});

const HOUR_MS = 3_600_000;

/** A replaced secret whose grace period ends `fromNowMs` from now (negative: ended). */
function replaced(fromNowMs: number): PreviousSecret {
  return { secret: generateWebhookSecret(), expiresAt: new Date(Date.now() + fromNowMs).toISOString() };
}

/** A webhook alert whose replaced secrets are `previous`, with its updated_at as stored. */
async function alertWith(previous: PreviousSecret[]) {
  const alert = await seedAlert(t, { method: "webhook", webhookUrl: "https://hooks.example.com/h" });
  await t.deps.db.update(alerts).set({ previousWebhookSecrets: previous }).where(eq(alerts.id, alert.alertId));
  return { alertId: alert.alertId, updatedAt: (await alertRow(t, alert.alertId)).updatedAt };
}

describe("the maintenance sweep", () => {
  it("drops the replaced secrets whose grace period has ended and keeps those still in it, in their order", async () => {
    const [newest, older, oldest] = [replaced(23 * HOUR_MS), replaced(2 * HOUR_MS), replaced(-60_000)];
    const mixed = await alertWith([newest, older, oldest]);
    const allExpired = await alertWith([replaced(-1_000), replaced(-HOUR_MS)]);
    const noneExpired = await alertWith([newest]);

    await makeReconcileProcessor(t.deps)({} as Job);

    const [mixedAfter, allExpiredAfter, noneExpiredAfter] = await Promise.all([
      alertRow(t, mixed.alertId),
      alertRow(t, allExpired.alertId),
      alertRow(t, noneExpired.alertId),
    ]);
    expect(mixedAfter.previousWebhookSecrets).toEqual([newest, older]);
    expect(allExpiredAfter.previousWebhookSecrets).toEqual([]);
    expect(noneExpiredAfter.previousWebhookSecrets).toEqual([newest]);
    // Nothing the owner set changed.
    expect(mixedAfter.updatedAt).toEqual(mixed.updatedAt);
    expect(noneExpiredAfter.updatedAt).toEqual(noneExpired.updatedAt);
  });

  it("drops them at most once per period across the workers: a sweep within it leaves the next expiry for a later one", async () => {
    const stale = replaced(-1_000);
    const later = await alertWith([stale]);
    expect(await sweepExpiredSecrets(t.deps)).toBeUndefined();
    expect((await alertRow(t, later.alertId)).previousWebhookSecrets).toEqual([stale]);
    const claim = await t.deps.redis.pttl(`${t.config.queuePrefix}:expired-secrets-swept`);
    expect(claim).toBeGreaterThan(0);
    expect(claim).toBeLessThanOrEqual(DROP_EXPIRED_SECRETS_EVERY_MS);
  });
});
