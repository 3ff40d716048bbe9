// wallet_alerts_notification_oldest_pending_seconds counts a notification only once it is due,
// and from when it fell due: a cooldown digest waits, pending, for its cooldown's end on purpose
// (pipeline/cooldown-digest.ts), and counted from its creation it tripped the gauge's alert.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.ts";

const ADMIN = { user: "ops", password: "correct-horse-battery" };
const AUTHORIZATION = `Basic ${Buffer.from(`${ADMIN.user}:${ADMIN.password}`).toString("base64")}`;

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp("oldest-pending-due", { ADMIN_USER: ADMIN.user, ADMIN_PASSWORD: ADMIN.password });
  const { sql } = t.deps;
  await sql`insert into tracked_wallets (id, owner, address) values ('wal_due', 'alice', 'addr-due')`;
  await sql`insert into alerts (id, owner, wallet_id, condition, threshold, notification_method, webhook_url)
            values ('alr_due', 'alice', 'wal_due', 'large_transfer', 10, 'webhook', 'https://example.com/hook')`;
});
afterAll(async () => {
  await t?.close();
});

async function oldestWebhook(): Promise<number> {
  const body = (await t.app.inject({ url: "/metrics", headers: { authorization: AUTHORIZATION } })).body;
  return Number(/^wallet_alerts_notification_oldest_pending_seconds\{channel="webhook"\} (\S+)$/m.exec(body)?.[1]);
}

const pendingWebhook = (id: string, createdSecondsAgo: number, dueInSeconds: number | null) =>
  t.deps.sql`
    insert into notifications (id, alert_id, channel, destination, payload, status, next_attempt_at, created_at, updated_at)
    values (${id}, 'alr_due', 'webhook', 'https://example.com/hook', '{}', 'pending',
            case when ${dueInSeconds}::int is null then null else now() + make_interval(secs => ${dueInSeconds}::int) end,
            now() - make_interval(secs => ${createdSecondsAgo}::int), now())`;

describe("the oldest pending notification", () => {
  it("leaves out a digest made 10 minutes ago and due in 5, and counts one due 90 s ago from then", async () => {
    await pendingWebhook("ntf_due_later", 600, 300);
    expect(await oldestWebhook()).toBe(0);

    await pendingWebhook("ntf_due_past", 600, -90);
    await pendingWebhook("ntf_due_fresh", 30, null);
    const oldest = await oldestWebhook();
    expect(oldest).toBeGreaterThanOrEqual(90);
    expect(oldest).toBeLessThan(600);
  });
});
