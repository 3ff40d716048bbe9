// Producer side of delivery: one job per notification, on its channel's queue, with the
// notification id as the BullMQ jobId. BullMQ ignores an add whose jobId already exists (with
// or without a priority, and the job keeps the priority it was added with), so the pipeline
// and the reconciler can both enqueue the same notification harmlessly.
import type { Queue } from "bullmq";
import type { Redis } from "ioredis";
import type { NotificationMethod } from "../domain/types.ts";
import { idTime } from "../ids.ts";
import { BURST_WINDOW_MS, burstOf, burstPriorities, countBursts } from "./delivery-priority.ts";
import { DELIVERY_QUEUE, type DeliverJob, type QueueName } from "./names.ts";
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

export type DeliveryItem = {
  notificationId: string;
  channel: NotificationMethod;
  /**
   * The alert's owner: the notification is counted in its owner's burst on the channel and, past
   * the first few of a minute, waits behind other callers' first ones (delivery-priority.ts).
   * Without it (a test notification, one a test writes) it keeps its place in line.
   */
  owner?: string;
  /**
   * Not to be sent before this (a cooldown digest: its cooldown's end): the job waits in BullMQ's
   * delayed set until then, rather than running at once to find it not due and park itself.
   * The processor still checks the row's next_attempt_at, so a job added without it (the
   * reconciler's) is not sent early either.
   */
  notBefore?: Date;
};

export type EnqueueOptions = {
  /**
   * The moment whose minute the notifications count in, in their owners' bursts: each one's
   * creation (its id's time) unless given. A redelivery counts when it is asked for: an outage's
   * failed notifications span many minutes, each minute's count long gone, and ranked by them a
   * thousand resent at once would all keep their place in line, ahead of other callers' first ones.
   */
  burstAtMs?: number;
  /** The clock `notBefore` is read against (the caller's deps.now(), which tests move); the real one unless given. */
  nowMs?: number;
};

/** A burst's count outlives its minute a little: a count read as its minute ends is still there. */
const BURST_COUNT_TTL_MS = 2 * BURST_WINDOW_MS;

/**
 * `redis` (the queues' own) keeps the count of each owner's burst across enqueues: a burst
 * rarely comes in one evaluation (a market event's transactions arrive over seconds, and are
 * evaluated as they come). Without it (tests), notifications are ranked within this enqueue alone.
 */
export async function enqueueDeliveries(queues: Queues, items: readonly DeliveryItem[], redis?: Redis, options: EnqueueOptions = {}): Promise<void> {
  if (items.length === 0) return;
  const byQueue = new Map<QueueName, DeliveryItem[]>();
  for (const item of items) {
    const queue = DELIVERY_QUEUE[item.channel];
    const queued = byQueue.get(queue) ?? [];
    queued.push(item);
    byQueue.set(queue, queued);
  }
  await Promise.all([...byQueue].map(([queue, queued]) => addDeliveries(queues[queue], queued, redis, options)));
}

async function addDeliveries(queue: Queue, items: readonly DeliveryItem[], redis: Redis | undefined, options: EnqueueOptions): Promise<void> {
  const bursts = items.map((item) => burstOf(item.owner, options.burstAtMs ?? idTime(item.notificationId)));
  const earlier = redis ? await countInBursts(redis, queue, countBursts(bursts)) : new Map<string, number>();
  const priorities = burstPriorities(bursts, earlier);
  const nowMs = options.nowMs ?? Date.now();
  await queue.addBulk(
    items.map(({ notificationId, notBefore }, i) => {
      const data: DeliverJob = { notificationId };
      const priority = priorities[i] ?? 0;
      const delay = notBefore ? notBefore.getTime() - nowMs : 0;
      return {
        name: "deliver",
        data,
        opts: { ...DELIVER_JOB_OPTIONS, jobId: notificationId, ...(priority > 0 ? { priority } : {}), ...(delay > 0 ? { delay } : {}) },
      };
    }),
  );
}

/**
 * Adds this enqueue's notifications to their bursts' counts, kept in Redis beside the queue (the
 * evaluations of every worker process add to one caller's burst), and answers each burst's count
 * before them: one round trip, none for an enqueue without owners. INCRBY answers each caller its
 * own range, so two evaluations enqueueing at once never rank two notifications alike.
 */
async function countInBursts(redis: Redis, queue: Queue, counts: ReadonlyMap<string, number>): Promise<Map<string, number>> {
  const earlier = new Map<string, number>();
  if (counts.size === 0) return earlier;
  const pipeline = redis.pipeline();
  const keyOf = (burst: string) => `${queue.qualifiedName}:owner-bursts:${burst}`;
  for (const [burst, count] of counts) pipeline.incrby(keyOf(burst), count).pexpire(keyOf(burst), BURST_COUNT_TTL_MS);
  const answers = (await pipeline.exec()) ?? [];
  for (const [error] of answers) if (error) throw error;
  [...counts].forEach(([burst, count], i) => earlier.set(burst, Number(answers[i * 2]?.[1] ?? count) - count));
  return earlier;
}
