// Keeps the reconciler's BullMQ job scheduler alive. The schedule lives in Redis, so a flush
// or a new Redis would silently end it; every worker process therefore upserts it at start
// and again on a timer. The timer takes a short Redis lock (SET NX PX) so that N workers do
// it about once per period between them, not N times. Upserting is idempotent, and BullMQ
// runs a freshly created `every` schedule at once, so a flushed Redis gets a sweep promptly.
//
// The timer's refresh also pulls back a schedule set by a clock that was ahead. BullMQ sets
// the next run from the Date.now() of the worker that ran the last one, and an upsert keeps a
// next run that is already set: after a worker 15 minutes ahead had run the sweep, the next
// one was 15 minutes away for every correct worker, and none ran for 16 minutes (review
// `skew`). Its next run is judged against Redis's clock, not the checking worker's own: a
// worker whose clock is behind would otherwise see every correct schedule as set ahead.
import type { Redis } from "ioredis";
import { createRepeatedWarning } from "../log-repeats.ts";
import type { Logger } from "../logger.ts";
import { JOB_RETENTION, QUEUES } from "../queue/names.ts";
import type { Queues } from "../queue/producers.ts";
import { redisNowMs, trackConnectionError } from "../redis.ts";

export const RECONCILE_SCHEDULER_ID = "reconcile";
export const RECONCILE_EVERY_MS = 30_000;
const LOCK_TTL_MS = 10_000;
/**
 * A next run further ahead of Redis's clock than this was set by a clock that was ahead:
 * BullMQ puts it one period after the last run, so it is never more than one period away.
 */
const AHEAD_LIMIT_MS = 2 * RECONCILE_EVERY_MS;

export async function upsertReconcileSchedule(queues: Queues): Promise<void> {
  await queues[QUEUES.maintenance].upsertJobScheduler(
    RECONCILE_SCHEDULER_ID,
    { every: RECONCILE_EVERY_MS },
    { name: "reconcile", data: {}, opts: { ...JOB_RETENTION } },
  );
}

/**
 * The keeper's refresh: the upsert, or, when the next run is further ahead of Redis's clock than
 * AHEAD_LIMIT_MS, the schedule removed and created again. Removing it also removes its next job
 * (the far-off `repeat:reconcile:<ts>` in the delayed set), and BullMQ runs a fresh `every`
 * schedule at once. Says so at warn, with how far ahead it was: some process's clock is (or
 * was) ahead, which upsets more than this schedule. Resolves with that many milliseconds, or
 * null when the schedule was in its place.
 */
export async function refreshReconcileSchedule(deps: { redis: Redis; queues: Queues; logger: Logger }): Promise<number | null> {
  const maintenance = deps.queues[QUEUES.maintenance];
  const next = (await maintenance.getJobScheduler(RECONCILE_SCHEDULER_ID))?.next;
  const aheadMs = typeof next === "number" ? next - (await redisNowMs(deps.redis)) : 0;
  if (aheadMs <= AHEAD_LIMIT_MS) {
    await upsertReconcileSchedule(deps.queues);
    return null;
  }
  await maintenance.removeJobScheduler(RECONCILE_SCHEDULER_ID);
  await upsertReconcileSchedule(deps.queues);
  deps.logger.warn(
    { aheadSeconds: Math.round(aheadMs / 1_000), wasDueAt: new Date(next!).toISOString() },
    "the reconciler's next sweep was set ahead of Redis's clock (by a process whose clock is ahead): pulled back, sweeping now",
  );
  return aheadMs;
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
  const tick = async (first = false) => {
    try {
      const won = await deps.redis.set(lockKey, String(process.pid), "PX", LOCK_TTL_MS, "NX");
      if (won) await refreshReconcileSchedule(deps);
    } catch (error) {
      // The first refresh runs beside the worker's start-up upsert, which says it failed itself.
      if (first) deps.logger.debug({ err: error }, "could not refresh the reconciler schedule at start");
      else warn(deps.redis.status === "ready" ? error : (connectionError() ?? error));
    }
  };
  // At once too: a worker started after one ahead has run the sweep pulls the schedule back
  // now, not a period later.
  void tick(true);
  const timer = setInterval(() => void tick(), everyMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
