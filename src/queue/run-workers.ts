// Starts one BullMQ Worker per chosen queue (WORKER_QUEUES), each on its own blocking Redis
// connection, and stops them within a bound: active jobs get `closeTimeoutMs` to finish,
// then the workers are closed by force and whatever was still running is picked up again
// by another worker when its lock expires (a stalled job), or by the reconciler.
import { Worker, type Processor } from "bullmq";
import type { Redis } from "ioredis";
import { isUnavailableError } from "../dependency-errors.ts";
import type { Deps } from "../deps.ts";
import { createRepeatedWarning } from "../log-repeats.ts";
import { WORKER_METRICS_OPTIONS, type DeliveryMetrics } from "../metrics/index.ts";
import type { Channels } from "../notify/channels/index.ts";
import { createWorkerRedis } from "../redis.ts";
import { retryScheduleBackoff } from "./disabled-notices.ts";
import { DELIVERY_CONCURRENCY, makeDeliverProcessor } from "./jobs/deliver.ts";
import { makeEmailQueueProcessor } from "./jobs/email-queue.ts";
import { makeEvaluateBatchProcessor } from "./jobs/evaluate-batch.ts";
import { makeEvaluateRiskProcessor } from "./jobs/evaluate-risk.ts";
import { makeReconcileProcessor } from "./jobs/reconcile.ts";
import { ALL_QUEUES, QUEUES, type QueueName } from "./names.ts";

export type WorkerDeps = Deps & { channels: Channels; deliveryMetrics?: DeliveryMetrics };

/**
 * A job's lock lasts 15 s and is renewed every 7.5 s while it runs; a worker checks for
 * expired locks every 5 s. So a job whose process died (kill -9) runs again within ~20 s,
 * and a live job is never taken for dead unless its process stalls for 15 s.
 */
export const LOCK_DURATION_MS = 15_000;
export const STALLED_INTERVAL_MS = 5_000;
export const DEFAULT_CLOSE_TIMEOUT_MS = 10_000;
/** After the forced close, how long to wait for it before stopping anyway. */
const FORCED_CLOSE_WAIT_MS = 2_000;

/**
 * Jobs in flight per process. Evaluation takes one group at a time: batches that arrive
 * meanwhile wait and join the next group (two at a time measured the same on two cores,
 * with smaller groups). Risk-change jobs are small: two keep a core busy between round trips.
 */
const CONCURRENCY: Readonly<Record<QueueName, number>> = {
  [QUEUES.transactions]: 1,
  [QUEUES.risk]: 2,
  [QUEUES.maintenance]: 1,
  [QUEUES.deliverWebhook]: DELIVERY_CONCURRENCY.webhook,
  [QUEUES.deliverEmail]: DELIVERY_CONCURRENCY.email,
  [QUEUES.deliverSms]: DELIVERY_CONCURRENCY.sms,
};

export type RunningWorkers = {
  queues: readonly QueueName[];
  workers: readonly Worker[];
  /** Waits up to timeoutMs for active jobs, then closes by force. */
  close: (timeoutMs?: number) => Promise<void>;
};

/** The queues a process serves: WORKER_QUEUES, or all of them. */
export function chosenQueues(setting: readonly string[] | "all"): QueueName[] {
  if (setting === "all") return [...ALL_QUEUES];
  const unknown = setting.filter((name) => !(ALL_QUEUES as readonly string[]).includes(name));
  if (unknown.length > 0) {
    throw new Error(`WORKER_QUEUES: unknown queue ${unknown.join(", ")}; the queues are ${ALL_QUEUES.join(", ")}`);
  }
  return [...new Set(setting)] as QueueName[];
}

function processorFor(deps: WorkerDeps, name: QueueName, stopping: AbortSignal): Processor {
  switch (name) {
    case QUEUES.transactions:
      return makeEvaluateBatchProcessor(deps, stopping) as Processor;
    case QUEUES.risk:
      return makeEvaluateRiskProcessor(deps) as Processor;
    case QUEUES.maintenance:
      return makeReconcileProcessor(deps) as Processor;
    case QUEUES.deliverWebhook:
      return makeDeliverProcessor(deps, "webhook") as Processor;
    case QUEUES.deliverEmail:
      return makeEmailQueueProcessor(deps) as Processor;
    case QUEUES.deliverSms:
      return makeDeliverProcessor(deps, "sms") as Processor;
  }
}

export function runWorkers(
  deps: WorkerDeps,
  options: { queues?: readonly QueueName[]; metrics?: ReadonlyArray<{ watch: (worker: Worker) => void }> } = {},
): RunningWorkers {
  const names = options.queues ?? chosenQueues(deps.config.workerQueues);
  const connections: Redis[] = [];
  // Aborted when close() is called, before the workers wait for their active jobs.
  const stopping = new AbortController();
  // One for all of the process's workers: a Redis outage is one problem, not one per queue.
  const warnWorkerError = createRepeatedWarning(deps.logger, "worker error");
  // While PostgreSQL or Redis is away every job fails (and is retried): hundreds a minute
  // under load, each one the same story. Any other failure is logged each time.
  const warnJobUnavailable = createRepeatedWarning(deps.logger, "job failed: a backing service is unavailable");
  const workers = names.map((name) => {
    const connection = createWorkerRedis(deps.config.redisUrl);
    connections.push(connection);
    const worker = new Worker(name, processorFor(deps, name, stopping.signal), {
      connection,
      prefix: deps.config.queuePrefix,
      concurrency: CONCURRENCY[name],
      lockDuration: LOCK_DURATION_MS,
      stalledInterval: STALLED_INTERVAL_MS,
      // The disabled-alert notices' retries (on the email queue) follow RETRY_SCHEDULE; every other job names a built-in backoff.
      settings: { backoffStrategy: retryScheduleBackoff(deps.config.retryScheduleMs) },
      ...WORKER_METRICS_OPTIONS,
    });
    // Without a listener an 'error' event would end the process; Redis trouble is retried,
    // and logged once a minute however many reconnect attempts fail meanwhile.
    worker.on("error", (error) => warnWorkerError(error, { queue: name }));
    worker.on("failed", (job, error) => {
      const fields = { queue: name, jobId: job?.id, attempts: job?.attemptsMade };
      if (isUnavailableError(error)) return warnJobUnavailable(error, fields);
      deps.logger.warn({ ...fields, err: error }, "job failed");
    });
    for (const metrics of options.metrics ?? []) metrics.watch(worker);
    return worker;
  });

  let closing: Promise<void> | undefined;
  return {
    queues: names,
    workers,
    close: (timeoutMs = DEFAULT_CLOSE_TIMEOUT_MS) => {
      closing ??= (async () => {
        stopping.abort();
        const graceful = Promise.all(workers.map((worker) => worker.close()));
        if (!(await settlesWithin(graceful, timeoutMs))) {
          deps.logger.warn({ timeoutMs }, "active jobs did not finish in time; closing workers by force");
          // BullMQ answers a second close() with the first one's promise, so close(true)
          // cannot cut short a close that waits on an unreachable Redis: bound it as well.
          const forced = Promise.all(workers.map((worker) => worker.close(true)));
          if (!(await settlesWithin(forced, FORCED_CLOSE_WAIT_MS))) {
            deps.logger.warn("workers did not close (is Redis reachable?); stopping without them");
          }
        }
        for (const connection of connections) connection.disconnect();
      })();
      return closing;
    },
  };
}

/** True when `work` settles (either way) within `ms`; a later rejection is ignored. */
async function settlesWithin(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const settled = work.then(
    () => true,
    () => true,
  );
  const deadline = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([settled, deadline]);
  } finally {
    clearTimeout(timer);
  }
}
