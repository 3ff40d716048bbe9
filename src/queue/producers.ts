// Producers: one BullMQ Queue per name, sharing one fail-fast Redis connection, so that an
// API request that cannot enqueue gets a 503 at once instead of hanging on a dead Redis.
import { Queue } from "bullmq";
import type { Redis } from "ioredis";
import { ALL_QUEUES, JOB_RETENTION, type QueueName } from "./names.ts";

export type Queues = Readonly<Record<QueueName, Queue>>;

export function createQueues(connection: Redis, prefix: string): Queues {
  const entries = ALL_QUEUES.map((name) => [
    name,
    new Queue(name, { connection, prefix, defaultJobOptions: { ...JOB_RETENTION } }),
  ]);
  return Object.freeze(Object.fromEntries(entries)) as Queues;
}

export async function closeQueues(queues: Queues): Promise<void> {
  await Promise.all(Object.values(queues).map((queue) => queue.close()));
}
