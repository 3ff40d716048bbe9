// Producer side of a redelivery: the reopened notifications' delivery jobs. A job's id is its
// notification's id (deliveries.ts), and BullMQ ignores an add whose id it still holds: the job
// that failed the notification is kept a week (JOB_RETENTION.removeOnFail), so added alone, a
// redelivery within that week queued nothing and the notification waited, pending, for a
// reconciler sweep that reads its job as failed and starts it afresh. So the old job goes first.
import type { Redis } from "ioredis";
import { setTimeout as sleep } from "node:timers/promises";
import { enqueueDeliveries, type DeliveryItem } from "./deliveries.ts";
import { DELIVERY_QUEUE } from "./names.ts";
import type { Queues } from "./producers.ts";

/**
 * A job BullMQ will not remove is locked: a worker still runs it. For a failed notification that
 * is the run that failed it, in its last moment (the failure is recorded in Postgres before the
 * job is marked failed), so an owner who redelivers as soon as GET shows `failed` can meet it.
 * Tried again a few times, 100 ms apart: that moment is over in milliseconds.
 */
const LOCKED_TRIES = 6;
const LOCKED_WAIT_MS = 100;

/**
 * Removes each notification's old job, then queues it afresh, ranked in its owner's burst at
 * `burstAtMs`. A job still locked after the tries keeps its id taken, so its add is ignored: the
 * notification, pending with no live job once that run ends, is started by the reconciler's next
 * sweep, as any such one is.
 */
export async function requeueDeliveries(queues: Queues, items: readonly DeliveryItem[], redis: Redis, burstAtMs: number): Promise<void> {
  if (items.length === 0) return;
  let locked = items;
  for (let tries = 1; locked.length > 0; tries++) {
    if (tries > 1) await sleep(LOCKED_WAIT_MS);
    // All at once: commands on one connection go out without waiting for each other's answers.
    const removed = await Promise.all(locked.map((item) => queues[DELIVERY_QUEUE[item.channel]].remove(item.notificationId)));
    locked = locked.filter((_, i) => removed[i] === 0);
    if (tries === LOCKED_TRIES) break;
  }
  await enqueueDeliveries(queues, items, redis, { burstAtMs });
}
