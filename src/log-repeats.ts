// A failure that repeats (Redis down: every reconnect attempt of every worker connection
// raises the same error, several a second) must not flood the log an operator reads at
// 3 a.m. The first of a kind is logged; then at most one per window, saying how many of
// that kind were left out since the last one.
import type { Logger } from "./logger.ts";

export type RepeatVerdict = { log: boolean; suppressed: number };
export type RepeatGate = (kind: string) => RepeatVerdict;

/** How often one kind of repeated failure reaches the log at warn. */
export const REPEAT_LOG_WINDOW_MS = 60_000;

/** Kinds remembered at once; error kinds are few (codes), so this only guards against odd messages. */
const MAX_KINDS = 100;

export function createRepeatGate(windowMs: number, now: () => number = Date.now): RepeatGate {
  const kinds = new Map<string, { loggedAt: number; suppressed: number }>();
  return (kind) => {
    const at = now();
    const seen = kinds.get(kind);
    if (seen && at - seen.loggedAt < windowMs) {
      seen.suppressed++;
      return { log: false, suppressed: seen.suppressed };
    }
    if (!seen && kinds.size >= MAX_KINDS) kinds.clear();
    kinds.set(kind, { loggedAt: at, suppressed: 0 });
    return { log: true, suppressed: seen?.suppressed ?? 0 };
  };
}

/**
 * BullMQ's answers about one job's state, with the job's id taken out. After a Redis outage
 * longer than a job's lock, every job that was active says "Missing lock for job ntf_….
 * moveToFinished" (then "… moveToDelayed"): one kind, not one per job. The work is not lost:
 * the job runs again once BullMQ finds it stalled, or the reconciler owes it.
 */
const JOB_STATE_ERRORS: ReadonlyArray<readonly [RegExp, string]> = [
  [/^Missing lock for job .+\. (\w+)$/s, "missing lock: $1"],
  [/^Lock mismatch for job .+\. Cmd (\w+) from (\w+)$/s, "lock mismatch: $1 from $2"],
  [/^Missing key for job .+\. (\w+)$/s, "missing key: $1"],
  [/^Job .+ is not in the (\w+) state\. (\w+)$/s, "not in the $1 state: $2"],
];

/** What makes two errors "the same" for the gate: the system error code, else the message (a job's id taken out). */
export function errorKind(error: unknown): string {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  if (typeof code === "string") return code;
  const text = String(message);
  for (const [pattern, kind] of JOB_STATE_ERRORS) if (pattern.test(text)) return text.replace(pattern, kind);
  return text;
}

/**
 * A warning for a failure that may repeat many times a second: each kind at warn once per
 * window (the next one says how many were left out), the repeats at debug.
 */
export function createRepeatedWarning(
  logger: Logger,
  message: string,
  windowMs: number = REPEAT_LOG_WINDOW_MS,
): (error: unknown, fields?: Record<string, unknown>) => void {
  const gate = createRepeatGate(windowMs);
  return (error, fields = {}) => {
    const { log, suppressed } = gate(errorKind(error));
    if (!log) return logger.debug({ err: error, ...fields }, `${message} (repeated)`);
    logger.warn({ err: error, ...fields, ...(suppressed > 0 ? { repeatsNotLogged: suppressed } : {}) }, message);
  };
}
