// While PostgreSQL or Redis is away every job fails: one evaluation per ingest batch, one
// delivery per notification, each reconciler sweep. That is hundreds of lines a minute under
// load, each telling the same story, and none of it is lost work: a job with attempts left runs
// again, and one whose attempts are spent (an outage outlasting an evaluation's or delivery's
// half minute of retries) is started afresh by the reconciler's next sweep, because PostgreSQL
// still says the work is owed. A line per job (with a stack) read like data loss and buried
// everything else in an operator's log.
//
// So: one `warn` per kind of error a minute, counting the jobs that failed of that kind since
// the last such line, per queue; each of them at `debug`. No stack: postgres.js gives a failed
// connection the stack of whichever query first waited for it, code unrelated to the job.
import { errorSummary } from "../dependency-errors.ts";
import { createRepeatGate, errorKind, REPEAT_LOG_WINDOW_MS } from "../log-repeats.ts";
import type { Logger } from "../logger.ts";

export const OUTAGE_FAILURE_MESSAGE =
  "job failed: a backing service is unavailable; it runs again (retried, or re-enqueued by the reconciler's next sweep, every 30 s)";

/** Kinds counted at once; the gate forgets its kinds past the same bound (odd messages only). */
const MAX_KINDS = 100;

/** Logs a job run that failed because PostgreSQL or Redis is unavailable (run-workers.ts jobFailure: "outage"). */
export type OutageFailureLog = (queue: string, error: unknown, fields?: Record<string, unknown>) => void;

export function createOutageFailureLog(
  logger: Logger,
  windowMs: number = REPEAT_LOG_WINDOW_MS,
  now: () => number = Date.now,
): OutageFailureLog {
  const gate = createRepeatGate(windowMs, now);
  // Per kind of error: the jobs failed since its last warn line, by queue (this one included).
  const unreported = new Map<string, Record<string, number>>();
  return (queue, error, fields = {}) => {
    const kind = errorKind(error);
    if (!unreported.has(kind) && unreported.size >= MAX_KINDS) unreported.clear();
    const byQueue = unreported.get(kind) ?? {};
    byQueue[queue] = (byQueue[queue] ?? 0) + 1;
    unreported.set(kind, byQueue);
    const cause = errorSummary(error);
    const code = (error as { code?: unknown } | null)?.code;
    const said = { ...fields, cause, ...(typeof code === "string" ? { code } : {}) };
    const { log, suppressed } = gate(kind);
    if (!log) return logger.debug(said, `${OUTAGE_FAILURE_MESSAGE} (repeated)`);
    unreported.delete(kind);
    const failedJobs = Object.values(byQueue).reduce((sum, count) => sum + count, 0);
    logger.warn(
      { ...said, failedJobs, failedJobsByQueue: byQueue, ...(suppressed > 0 ? { repeatsNotLogged: suppressed } : {}) },
      OUTAGE_FAILURE_MESSAGE,
    );
  };
}
