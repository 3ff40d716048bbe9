// The alert-archive tests' kit: alerts made through the API that the real pipeline fires and the
// real delivery workers send to a webhook receiver, and reads of an alert's record as the live
// tables hold it and as the archive holds it, column for column.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Queue } from "bullmq";
import { DELIVERY_QUEUE, type DeliverJob } from "../../src/queue/names.ts";
import { startTestApp, type TestApp } from "./app.ts";
import { randomAddress } from "./chain.ts";
import { startDeliveryWorkers } from "./delivery.ts";
import { settled, startWorkers, tx } from "./pipeline.ts";
import { bearer, ingestTransactions } from "./seed.ts";
import { waitFor } from "./wait.ts";
import { startWebhookReceiver, type Route } from "./webhook-receiver.ts";

export type ArchiveRig = {
  t: TestApp;
  alice: string;
  bob: string;
  /** A path of its own on the rig's webhook receiver, for one alert's webhook. */
  newRoute: () => Route;
  close: () => Promise<void>;
};

/**
 * The app of a test file of the archive, with what makes an alert's record: the pipeline's
 * workers, the delivery workers (email to an outbox folder of the rig's own) and a webhook
 * receiver that hands out a route per alert, and alice's and bob's tokens. A failed attempt is
 * retried an hour later, so a notification refused once is still owed when the test deletes its
 * alert or wallet.
 */
export async function startArchiveRig(label: string): Promise<ArchiveRig> {
  const t = await startTestApp(label, { RETRY_SCHEDULE: "1h" });
  // What has started, closed last first: also when a later piece fails to start.
  const closers: (() => Promise<unknown>)[] = [() => t.close()];
  const close = async () => {
    for (const closeOne of [...closers].reverse()) await closeOne();
  };
  try {
    const receiver = await startWebhookReceiver();
    closers.push(() => receiver.close());
    const outboxDir = await mkdtemp(join(tmpdir(), "wa-archive-outbox-"));
    closers.push(() => rm(outboxDir, { recursive: true, force: true }));
    const pipeline = startWorkers(t);
    closers.push(() => pipeline.close());
    const deliveries = startDeliveryWorkers(t, { outboxDir, webhookTimeoutMs: 5_000 });
    closers.push(() => deliveries.close());
    let routes = 0;
    const newRoute = () => receiver.route(`/archive-hook-${++routes}`);
    return { t, alice: await t.token("alice"), bob: await t.token("bob"), newRoute, close };
  } catch (error) {
    await close();
    throw error;
  }
}

export type ArchivableAlert = { alertId: string; walletId: string; address: string; secret: string | null };

/** POST /v1/risk/alerts: a large_transfer alert at 1,000 on the wallet, by webhook to `route` or by email. */
export async function createArchivableAlert(
  t: TestApp,
  token: string,
  wallet: { walletId: string; address: string },
  channel: { route: Route } | { email: string },
): Promise<ArchivableAlert> {
  const method = "route" in channel ? { notificationMethod: "webhook", webhookUrl: channel.route.url } : { notificationMethod: "email", recipient: channel.email };
  const res = await t.app.inject({
    method: "POST",
    url: "/v1/risk/alerts",
    headers: bearer(token),
    payload: { walletId: wallet.walletId, condition: "large_transfer", threshold: 1_000, ...method },
  });
  if (res.statusCode !== 201) throw new Error(`POST /v1/risk/alerts answered ${res.statusCode}: ${res.body}`);
  const { alertId, webhookSecret } = res.json<{ alertId: string; webhookSecret?: string }>();
  if ("route" in channel) channel.route.verifyWith(webhookSecret!);
  return { alertId, ...wallet, secret: webhookSecret ?? null };
}

/** Ingests a transfer of `amount` SOL out of `address` and waits until the pipeline has evaluated it. */
export async function transfer(t: TestApp, token: string, address: string, amount: number): Promise<void> {
  await ingestTransactions(t, token, [tx({ from: address, to: randomAddress(), amount, blockTime: Math.floor(Date.now() / 1000) })]);
  await settled(t);
}

/**
 * Fires the webhook alert twice through the pipeline, transfers of 2,500 and 3,000 over its
 * 1,000: the first notification delivered (200), the second refused once (503) and owed, its
 * retry an hour away. The two notifications, oldest first.
 */
export async function fireTwiceSecondOwed(t: TestApp, token: string, alert: ArchivableAlert, route: Route): Promise<NotificationState[]> {
  await transfer(t, token, alert.address, 2_500);
  await notificationsOf(t, alert.alertId, 1, ([first]) => first!.status === "delivered");
  route.respond({ status: 503, body: "busy" });
  await transfer(t, token, alert.address, 3_000);
  return notificationsOf(t, alert.alertId, 2, ([, second]) => second!.status === "retrying");
}

type NotificationState = { id: string; status: string; attemptCount: number };

/** Waits until the alert has `count` notifications and `ready` holds for them (newest last). */
export async function notificationsOf(
  t: TestApp,
  alertId: string,
  count: number,
  ready: (rows: NotificationState[]) => boolean,
): Promise<NotificationState[]> {
  return waitFor(`${count} notifications of ${alertId} to settle`, async () => {
    const rows = await t.deps.sql<NotificationState[]>`
      select id, status, attempt_count as "attemptCount" from notifications where alert_id = ${alertId} order by created_at, id`;
    return rows.length === count && ready(rows) ? rows : undefined;
  });
}

/** The delivery job of a notification that waits for its next attempt, once it is parked (delayed) in BullMQ. */
export async function parkedJob(t: TestApp, notificationId: string) {
  const queue = t.deps.queues[DELIVERY_QUEUE.webhook] as Queue<DeliverJob>;
  await waitFor(`the job of ${notificationId} to wait for its retry`, async () => (await queue.getJobState(notificationId)) === "delayed");
  return {
    /** Runs the job now, as when its retry comes due, and waits until it has finished. */
    runNow: async () => {
      await (await queue.getJob(notificationId))!.promote();
      return waitFor(`the job of ${notificationId} to finish`, async () => {
        const state = await queue.getJobState(notificationId);
        return state === "completed" || state === "failed" ? state : undefined;
      });
    },
  };
}

export type AlertRecord = { events: unknown[]; notifications: unknown[]; attempts: unknown[] };

type RecordTables = { events: string; notifications: string; attempts: string };

/** The alerts' events, notifications and delivery attempts, whole rows, as `tables` hold them. */
async function recordIn(t: TestApp, tables: RecordTables, alertIds: string[]): Promise<AlertRecord> {
  const sql = t.deps.sql;
  const notifications = sql(tables.notifications);
  return {
    events: (await sql`select to_jsonb(e) as row from ${sql(tables.events)} e where alert_id = any(${alertIds}::text[]) order by id`).map((r) => r.row),
    notifications: (await sql`select to_jsonb(n) as row from ${notifications} n where alert_id = any(${alertIds}::text[]) order by id`).map((r) => r.row),
    attempts: (
      await sql`select to_jsonb(d) as row from ${sql(tables.attempts)} d join ${notifications} n on n.id = d.notification_id
                where n.alert_id = any(${alertIds}::text[]) order by d.id`
    ).map((r) => r.row),
  };
}

/** The alerts' record as the live tables hold it. */
export const liveRecord = (t: TestApp, alertIds: string[]): Promise<AlertRecord> =>
  recordIn(t, { events: "alert_events", notifications: "notifications", attempts: "delivery_attempts" }, alertIds);

/** The same, as the archive holds it. */
export const archivedRecord = (t: TestApp, alertIds: string[]): Promise<AlertRecord> =>
  recordIn(t, { events: "deleted_alert_events", notifications: "deleted_notifications", attempts: "deleted_delivery_attempts" }, alertIds);

export type ArchivedAlert = {
  id: string;
  owner: string;
  walletId: string;
  walletAddress: string;
  condition: string;
  settings: Record<string, unknown>;
  deletedBy: string;
  reason: string;
  deletedAt: string;
};

export async function archivedAlerts(t: TestApp, alertIds: string[]): Promise<ArchivedAlert[]> {
  return t.deps.sql<ArchivedAlert[]>`
    select id, owner, wallet_id as "walletId", wallet_address as "walletAddress", condition, settings,
           deleted_by as "deletedBy", reason, deleted_at::text as "deletedAt"
    from deleted_alerts where id = any(${alertIds}::text[]) order by id`;
}

/** Every row of every archive table, as text: what a search of the archive for a string reads. */
export async function wholeArchiveText(t: TestApp): Promise<string> {
  const [row] = await t.deps.sql<{ text: string | null }[]>`
    select string_agg(r, E'\n') as text from (
      select to_jsonb(a)::text as r from deleted_alerts a
      union all select to_jsonb(e)::text from deleted_alert_events e
      union all select to_jsonb(n)::text from deleted_notifications n
      union all select to_jsonb(d)::text from deleted_delivery_attempts d) rows`;
  return row?.text ?? "";
}

/** How many rows the archive tables hold, in all. */
export async function archiveSize(t: TestApp): Promise<number> {
  const [row] = await t.deps.sql<{ n: number }[]>`
    select ((select count(*) from deleted_alerts) + (select count(*) from deleted_alert_events)
          + (select count(*) from deleted_notifications) + (select count(*) from deleted_delivery_attempts))::int as n`;
  return row!.n;
}
