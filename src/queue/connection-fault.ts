// A process whose BullMQ connection cannot be used ends, once, with one fatal line saying why,
// for its supervisor to start a fresh one. Shared by the worker (its Workers and its producers)
// and the API (its producers).
//
// BullMQ sets a connection up once (it reads the Redis version from INFO). When that fails, the
// Worker or Queue on it fails everything from then on, however well Redis answers later: a
// Worker's loop retries without yielding (the event loop starves, no log line gets written, no
// SIGTERM is heard), and a Queue fails every enqueue (the API answered each one 500 while its
// /readyz said 200). Only a new process helps.
import { errorSummary, isUnreadableInfoAnswer } from "../dependency-errors.ts";
import type { Logger } from "../logger.ts";
import type { Queues } from "./producers.ts";

export type ConnectionFaultExit = {
  /** Logs why (once, whichever reason comes first) and ends the process; later calls do nothing. */
  exitOnce: (logWhy: () => void) => void;
  /**
   * BullMQ could not set up the connection of `queue`'s Worker or Queue: one fatal line, then
   * exit 1. Ignored once the process is stopping (closing connections fails a set-up still waiting).
   */
  exitUnusable: (error: unknown, queue: string) => void;
};

export type ConnectionFaultOptions = {
  logger: Logger;
  /** Who says it, first on the line: "worker", "api". */
  who: string;
  /** What exiting means for this process's work, after "exiting". */
  consequence: string;
  /** True once the process has begun a graceful stop. */
  stopping: () => boolean;
  /** Ends the process (process.exit; tests pass their own). */
  exit?: (code: number) => void;
};

export function createConnectionFaultExit(options: ConnectionFaultOptions): ConnectionFaultExit {
  const exit = options.exit ?? ((code: number) => process.exit(code));
  let exiting = false;
  const exitOnce = (logWhy: () => void) => {
    if (exiting) return;
    exiting = true;
    logWhy();
    exit(1);
  };
  const exitUnusable = (error: unknown, queue: string) => {
    if (options.stopping()) return;
    exitOnce(() =>
      options.logger.fatal(
        { queue, cause: errorSummary(error) },
        `${options.who}: ${unusableConnectionReason(error)}; BullMQ does not set a connection up again, so this process cannot recover: exiting ${options.consequence}`,
      ),
    );
  };
  return { exitOnce, exitUnusable };
}

/** Why BullMQ could not set a connection up, for an operator: BullMQ's own words for the INFO case say nothing of Redis. */
export function unusableConnectionReason(error: unknown): string {
  return isUnreadableInfoAnswer(error)
    ? "Redis answered the connection's version check (INFO) with something other than text: its answers are out of step with its commands, or REDIS_URL does not lead to a Redis"
    : `BullMQ could not set up its Redis connection (${errorSummary(error)})`;
}

/**
 * Exits through `fault` when BullMQ could not set up a producer's connection: each Queue's
 * set-up settles once; it rejects only when BullMQ gave up on it, and every enqueue on it would
 * fail from then on.
 */
export function exitWhenProducersUnusable(queues: Queues, fault: ConnectionFaultExit): void {
  for (const queue of Object.values(queues)) queue.waitUntilReady().catch((error: unknown) => fault.exitUnusable(error, queue.name));
}
