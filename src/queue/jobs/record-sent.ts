// Recording an attempt that was made: the receiver has the message (a webhook answered 2xx, an
// email accepted), and only PostgreSQL's record of it is missing. Until 2026-11-28 the record was
// tried once, and a failure (PostgreSQL restarting for 3 s, a backend killed, no connection left)
// failed the job: BullMQ's retry found the notification still open and sent it again. One
// restart re-sent 130 webhooks, every attempt recorded in the batch that failed, and
// delivery_attempts showed one send of each.
//
// Now the write is retried for a while (a restart's length), and from its first failure the
// attempt waits in the job's data in Redis: a later run of the job (BullMQ's retry, a stalled
// job's second run after this process died) writes it instead of sending. Sent twice still:
// an attempt whose job ran out of BullMQ's runs before PostgreSQL took it (an outage of several
// minutes; the reconciler's fresh job has no such data), or whose data Redis could not keep.
import type { Job } from "bullmq";
import type { AttemptRecord, DeliveryStore } from "../../db/queries/deliveries.ts";
import { isUnavailableError } from "../../dependency-errors.ts";
import type { NotificationMethod } from "../../domain/types.ts";
import type { Logger } from "../../logger.ts";
import type { GiveUpCause } from "../../notify/give-up-cause.ts";
import type { DeliverJob } from "../names.ts";

/** How long a made attempt's record is retried inside the job: about a PostgreSQL restart. */
export const RECORD_RETRY_MS = 30_000;
const FIRST_RETRY_DELAY_MS = 250;
const MAX_RETRY_DELAY_MS = 4_000;

/**
 * SQLSTATEs of a write that was rolled back and may pass if tried again, beside an unavailable
 * PostgreSQL: a deadlock, a serialization failure, a statement cancelled, a lock not had.
 */
const RETRIED_SQLSTATES = new Set(["40P01", "40001", "57014", "55P03"]);

/**
 * An attempt made, to be recorded. `givenUp`: why it failed its notification for good, if it did
 * (give-up-cause.ts), kept with it so that a later run that records it counts it as this one would.
 */
export type MadeAttempt = AttemptRecord & { channel: NotificationMethod; givenUp?: GiveUpCause };

/** An attempt made and not yet recorded, as the job's data keeps it (JSON: dates as ISO text). */
type UnrecordedAttempt = Omit<MadeAttempt, "at" | "nextAttemptAt"> & { at: string; nextAttemptAt: string | null };

/** A delivery job's data: its notification, and an attempt owed to PostgreSQL, if one is. */
export type DeliverJobData = DeliverJob & { unrecorded?: UnrecordedAttempt };

export type RecordSentDeps = {
  store: DeliveryStore;
  logger: Logger;
  /** RECORD_RETRY_MS unless given (tests). */
  retryForMs?: number;
};

/**
 * Records the attempt, retrying a failed write with a backoff for up to retryForMs; false when
 * the notification was no longer open. `again`: a write of it failed before (a previous run).
 * Throws only once the time is up or on an error that a retry would not mend; the attempt then
 * stays in the job's data for its next run (recordOwed).
 */
export async function recordSent(
  deps: RecordSentDeps,
  job: Job<DeliverJob>,
  attempt: MadeAttempt,
  again = false,
): Promise<boolean> {
  const deadline = Date.now() + (deps.retryForMs ?? RECORD_RETRY_MS);
  let delayMs = FIRST_RETRY_DELAY_MS;
  let stashed = again;
  for (;;) {
    try {
      const recorded = await deps.store.record(attempt, { again: stashed });
      if (stashed) await forget(deps, job);
      return recorded;
    } catch (error) {
      if (!stashed) {
        await keep(deps, job, attempt);
        stashed = true;
      }
      if (!worthRetrying(error) || Date.now() + delayMs > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, delayMs));
      delayMs = Math.min(delayMs * 2, MAX_RETRY_DELAY_MS);
    }
  }
}

/**
 * The attempt an earlier run of this job made and could not record, written now (and then
 * dropped from the job's data); undefined when none is owed. Throws, the attempt still owed, when
 * PostgreSQL still cannot take it.
 */
export async function recordOwed(
  deps: RecordSentDeps,
  job: Job<DeliverJob>,
): Promise<Pick<MadeAttempt, "channel" | "status" | "givenUp"> | undefined> {
  const owed = (job.data as DeliverJobData).unrecorded;
  if (!owed) return undefined;
  const attempt = { ...owed, at: new Date(owed.at), nextAttemptAt: owed.nextAttemptAt === null ? null : new Date(owed.nextAttemptAt) };
  const recorded = await recordSent(deps, job, attempt, true);
  return recorded ? { channel: owed.channel, status: owed.status, givenUp: owed.givenUp } : undefined;
}

function worthRetrying(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return isUnavailableError(error) || (typeof code === "string" && RETRIED_SQLSTATES.has(code));
}

/** Into the job's data. Redis failing too leaves the next run to send it again, as before: said in the log. */
async function keep(deps: RecordSentDeps, job: Job<DeliverJob>, attempt: MadeAttempt): Promise<void> {
  const unrecorded: UnrecordedAttempt = { ...attempt, at: attempt.at.toISOString(), nextAttemptAt: attempt.nextAttemptAt?.toISOString() ?? null };
  const data: DeliverJobData = { notificationId: job.data.notificationId, unrecorded };
  await job.updateData(data).catch((error: unknown) =>
    deps.logger.warn(
      { err: error, notificationId: attempt.notificationId },
      "an attempt made could not be kept in its job while PostgreSQL is retried; if its record fails for good it is sent again",
    ),
  );
}

/** Recorded: its next run has nothing owed. Left there, that run finds it recorded and writes nothing. */
async function forget(deps: RecordSentDeps, job: Job<DeliverJob>): Promise<void> {
  await job.updateData({ notificationId: job.data.notificationId }).catch((error: unknown) =>
    deps.logger.debug({ err: error, notificationId: job.data.notificationId }, "a recorded attempt stays in its job's data"),
  );
}
