// Keeps the reconciler's BullMQ job scheduler alive. The schedule lives in Redis, so a flush
// or a new Redis would silently end it; every worker process therefore upserts it at start
// and again on a timer. The timer takes a short Redis lock (SET NX PX) so that N workers do
// it about once per period between them, not N times. Upserting is idempotent, and BullMQ
// runs a freshly created `every` schedule at once, so a flushed Redis gets a sweep promptly.
import type { Redis } from "ioredis";
import { createRepeatedWarning } from "../log-repeats.ts";
import type { Logger } from "../logger.ts";
import { JOB_RETENTION, QUEUES } from "../queue/names.ts";
import type { Queues } from "../queue/producers.ts";
import { trackConnectionError } from "../redis.ts";

export const RECONCILE_SCHEDULER_ID = "reconcile";
export const RECONCILE_EVERY_MS = 30_000;
const LOCK_TTL_MS = 10_000;

export async function upsertReconcileSchedule(queues: Queues): Promise<void> {
  await queues[QUEUES.maintenance].upsertJobScheduler(
    RECONCILE_SCHEDULER_ID,
    { every: RECONCILE_EVERY_MS },
    { name: "reconcile", data: {}, opts: { ...JOB_RETENTION } },
  );
}

export type ScheduleKeeper = { stop: () => void };

export function keepReconcileScheduled(
  deps: { redis: Redis; queues: Queues; logger: Logger; config: { queuePrefix: string } },
  everyMs: number = RECONCILE_EVERY_MS,
): ScheduleKeeper {
  const lockKey = `${deps.config.queuePrefix}:reconcile-schedule-lock`;
  // Redis down: the next tick tries again, and workers are waiting for Redis anyway. Said once
  // a minute, as the other repeating failures are, and with the connection's own error: the
  // command's is only ioredis's "Stream isn't writeable".
  const warn = createRepeatedWarning(deps.logger, "could not refresh the reconciler schedule");
  const connectionError = trackConnectionError(deps.redis);
  const tick = async () => {
    try {
      const won = await deps.redis.set(lockKey, String(process.pid), "PX", LOCK_TTL_MS, "NX");
      if (won) await upsertReconcileSchedule(deps.queues);
    } catch (error) {
      warn(deps.redis.status === "ready" ? error : (connectionError() ?? error));
    }
  };
  const timer = setInterval(() => void tick(), everyMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
