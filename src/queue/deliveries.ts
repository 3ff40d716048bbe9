// Producer side of delivery: one job per notification, on its channel's queue, with the
// notification id as the BullMQ jobId. BullMQ ignores an add whose jobId already exists,
// so the pipeline and the reconciler can both enqueue the same notification harmlessly.
import type { NotificationMethod } from "../domain/types.ts";
import { DELIVERY_QUEUE, type DeliverJob } from "./names.ts";
import type { Queues } from "./producers.ts";

/**
 * BullMQ's own retries cover only infrastructure trouble inside the processor (Postgres
 * unreachable, a crash mid-job): 1, 2, 4, 8 and 16 s, enough for a restart. After that the
 * job is failed and the reconciler's next sweep (every 30 s) starts it afresh, so however
 * long an outage lasts, deliveries resume within about a sweep of its end; with waits
 * doubling for 17 minutes, a job could sleep up to 8.5 minutes past it. Delivery retries are
 * scheduled in Postgres by the processor and never spend these attempts.
 */
export const DELIVER_JOB_OPTIONS = {
  attempts: 6,
  backoff: { type: "exponential", delay: 1_000 },
} as const;

export async function enqueueDeliveries(
  queues: Queues,
  items: ReadonlyArray<{ notificationId: string; channel: NotificationMethod }>,
  delayMs?: number,
): Promise<void> {
  if (items.length === 0) return;
  const byQueue = new Map<string, Array<{ name: string; data: DeliverJob; opts: object }>>();
  for (const { notificationId, channel } of items) {
    const queue = DELIVERY_QUEUE[channel];
    const jobs = byQueue.get(queue) ?? [];
    jobs.push({
      name: "deliver",
      data: { notificationId },
      opts: { ...DELIVER_JOB_OPTIONS, jobId: notificationId, ...(delayMs && delayMs > 0 ? { delay: delayMs } : {}) },
    });
    byQueue.set(queue, jobs);
  }
  await Promise.all(
    [...byQueue].map(([queue, jobs]) => queues[queue as keyof Queues].addBulk(jobs)),
  );
}
