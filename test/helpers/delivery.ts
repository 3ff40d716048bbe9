// Delivery test kit: alerts and notifications written straight into PostgreSQL (as the
// pipeline would write them, bypassing the creation-time checks), real BullMQ workers
// running our processor, and polling of the notification row until it settles.
import { Worker } from "bullmq";
import { eq } from "drizzle-orm";
import { insertNotification } from "../../src/db/queries/notifications.ts";
import { alerts, deliveryAttempts, notifications, trackedWallets } from "../../src/db/schema.ts";
import type { NotificationMethod, NotificationPayload } from "../../src/domain/types.ts";
import { newId } from "../../src/ids.ts";
import { createChannels, type ChannelOptions, type Channels } from "../../src/notify/channels/index.ts";
import { generateWebhookSecret } from "../../src/notify/webhook-secret.ts";
import { enqueueDeliveries } from "../../src/queue/deliveries.ts";
import { retryScheduleBackoff } from "../../src/queue/disabled-notices.ts";
import { makeDeliverProcessor, type DeliverDeps } from "../../src/queue/jobs/deliver.ts";
import { makeEmailQueueProcessor } from "../../src/queue/jobs/email-queue.ts";
import { DELIVERY_QUEUE } from "../../src/queue/names.ts";
import { createWorkerRedis } from "../../src/redis.ts";
import type { TestApp } from "./app.ts";
import { randomAddress } from "./chain.ts";

export type SeededAlert = { alertId: string; walletId: string; address: string; owner: string; secret: string | null };

export async function seedAlert(
  t: TestApp,
  options: { method: NotificationMethod; webhookUrl?: string; recipient?: string; owner?: string; alias?: string | null },
): Promise<SeededAlert> {
  const owner = options.owner ?? "alice";
  const walletId = newId("wal");
  const address = randomAddress();
  await t.deps.db.insert(trackedWallets).values({ id: walletId, owner, address, alias: options.alias === undefined ? "Treasury" : options.alias });
  const alertId = newId("alr");
  const secret = options.method === "webhook" ? generateWebhookSecret() : null;
  await t.deps.db.insert(alerts).values({
    id: alertId,
    owner,
    walletId,
    condition: "large_transfer",
    threshold: "10000",
    notificationMethod: options.method,
    webhookUrl: options.webhookUrl ?? null,
    recipient: options.recipient ?? null,
    webhookSecret: secret,
  });
  return { alertId, walletId, address, owner, secret };
}

export function samplePayload(alert: Pick<SeededAlert, "alertId" | "walletId" | "address">, type: NotificationPayload["type"] = "risk_alert.triggered"): NotificationPayload {
  return {
    type,
    timestamp: new Date().toISOString(),
    data: {
      alertId: alert.alertId,
      walletId: alert.walletId,
      address: alert.address,
      alias: "Treasury",
      condition: "large_transfer",
      threshold: 10_000,
      observed: 25_000,
      riskScore: 40,
      riskFactors: ["large_outflow"],
      reason: "Sent 25,000 USDC to 9WzD…AWWM (threshold 10,000).",
    },
  };
}

/** Writes a pending notification row (as the pipeline does) and enqueues its job. */
export async function seedNotification(
  t: TestApp,
  alert: SeededAlert,
  channel: NotificationMethod,
  destination: string,
  options: { enqueue?: boolean; type?: NotificationPayload["type"] } = {},
): Promise<string> {
  const id = newId("ntf");
  await insertNotification(t.deps.sql, {
    id,
    alertId: alert.alertId,
    eventId: null,
    channel,
    destination,
    payload: samplePayload(alert, options.type),
    createdAt: new Date(),
  });
  if (options.enqueue ?? true) await enqueueDeliveries(t.deps.queues, [{ notificationId: id, channel }]);
  return id;
}

export type DeliveryWorkers = { channels: Channels; workers: readonly Worker[]; close: () => Promise<void> };

/**
 * Real BullMQ workers on the test app's queue prefix, one per channel, running makeDeliverProcessor
 * (the email one through makeEmailQueueProcessor, which also sends disabled-alert notices), set up
 * as runWorkers sets them up.
 */
export function startDeliveryWorkers(
  t: TestApp,
  channelOptions: ChannelOptions = {},
  processorOptions: Pick<DeliverDeps, "webhookAttemptsPerReceiver" | "deliveryMetrics" | "recordRetryMs" | "providerRetryMs"> = {},
  /** Jobs each worker runs at once (5 unless given: a test of a burst wants more in flight). */
  concurrency = 5,
): DeliveryWorkers {
  const channels = createChannels(t.config, t.deps.logger, channelOptions);
  const deps = { ...t.deps, channels, ...processorOptions };
  const workers = (["webhook", "email", "sms"] as const).map(
    (channel) =>
      new Worker(DELIVERY_QUEUE[channel], channel === "email" ? makeEmailQueueProcessor(deps) : makeDeliverProcessor(deps, channel), {
        connection: createWorkerRedis(t.config.redisUrl),
        prefix: t.config.queuePrefix,
        concurrency,
        settings: { backoffStrategy: retryScheduleBackoff(t.config.retryScheduleMs) },
      }),
  );
  // A worker without an 'error' listener would throw on a connection hiccup; show it instead.
  for (const worker of workers) worker.on("error", (error) => console.error("delivery worker error:", error));
  return {
    channels,
    workers,
    close: async () => {
      await Promise.all(workers.map((worker) => worker.close()));
      await channels.close();
      // Failed jobs are kept for a week by design; a test's queues are not worth keeping.
      await Promise.all(Object.values(DELIVERY_QUEUE).map((name) => t.deps.queues[name].obliterate({ force: true })));
    },
  };
}

export type NotificationState = typeof notifications.$inferSelect;

/** Polls the notification row until `settled` holds (bounded; the failure message shows the last state). */
export async function waitForNotification(
  t: TestApp,
  id: string,
  settled: (row: NotificationState) => boolean,
  timeoutMs = 15_000,
): Promise<NotificationState> {
  const deadline = Date.now() + timeoutMs;
  let last: NotificationState | undefined;
  while (Date.now() < deadline) {
    [last] = await t.deps.db.select().from(notifications).where(eq(notifications.id, id));
    if (last && settled(last)) return last;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`notification ${id} did not settle within ${timeoutMs} ms; last state: ${JSON.stringify(last)}`);
}

export const isFinished = (row: NotificationState) => row.status === "delivered" || row.status === "failed";

export async function attemptsOf(t: TestApp, id: string) {
  return t.deps.db.select().from(deliveryAttempts).where(eq(deliveryAttempts.notificationId, id)).orderBy(deliveryAttempts.at, deliveryAttempts.id);
}

export async function alertRow(t: TestApp, alertId: string) {
  const [row] = await t.deps.db.select().from(alerts).where(eq(alerts.id, alertId));
  if (!row) throw new Error(`alert ${alertId} not found`);
  return row;
}
