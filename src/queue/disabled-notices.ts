// Producer side of the disabled-alert notice (notify/alert-health.ts): one job on the email
// queue per disabling, named apart from the deliveries so the email worker routes it
// (jobs/email-queue.ts). Unlike a delivery, whose schedule lives in its notification row, the
// notice has no row: BullMQ's own attempts carry its retries, spaced by RETRY_SCHEDULE.
import type { BackoffStrategy } from "bullmq";
import type { DisabledNotice } from "../notify/alert-health.ts";
import { nextDelayMs } from "../notify/retry-policy.ts";
import { QUEUES, type DisabledNoticeJob } from "./names.ts";
import type { Queues } from "./producers.ts";

export const DISABLED_NOTICE_JOB = "disabled-notice";

/** The backoff type of the notice jobs; the workers' retryScheduleBackoff answers for it. */
export const RETRY_SCHEDULE_BACKOFF = "retry-schedule";

/**
 * One job per disabling: the same disabling queued twice is one job, a later disabling of
 * the same alert another. BullMQ refuses a custom jobId containing ':'.
 */
export function disabledNoticeJobId(notice: DisabledNotice): string {
  return `notice_${notice.alertId}_${notice.disabledAt.getTime()}`;
}

/** The first try, then one attempt per step of the schedule, as for a notification. */
export function disabledNoticeJobOptions(scheduleMs: readonly number[]) {
  return { attempts: scheduleMs.length + 1, backoff: { type: RETRY_SCHEDULE_BACKOFF } };
}

export async function enqueueDisabledNotice(queues: Queues, scheduleMs: readonly number[], notice: DisabledNotice): Promise<void> {
  const data: DisabledNoticeJob = { alertId: notice.alertId, disabledAt: notice.disabledAt.getTime() };
  await queues[QUEUES.deliverEmail].add(DISABLED_NOTICE_JOB, data, {
    ...disabledNoticeJobOptions(scheduleMs),
    jobId: disabledNoticeJobId(notice),
  });
}

/**
 * A worker's `settings.backoffStrategy`: BullMQ asks it for the wait before retrying a job whose
 * backoff type is not one of its own. The notice waits as a notification would (the schedule,
 * ±20 % jitter); -1 (no retry) for any other type, which no job of ours uses.
 */
export function retryScheduleBackoff(scheduleMs: readonly number[], random: () => number = Math.random): BackoffStrategy {
  return (attemptsMade, type) => {
    if (type !== RETRY_SCHEDULE_BACKOFF) return -1;
    return nextDelayMs(attemptsMade, scheduleMs, random) ?? -1;
  };
}
