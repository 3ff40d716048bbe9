// Starts one BullMQ Worker per chosen queue (WORKER_QUEUES), each on its own blocking Redis
// connection, and stops them within a bound: active jobs get `closeTimeoutMs` to finish,
// then the connections are dropped and whatever was still running is picked up again by
// another worker when its lock expires (a stalled job), or by the reconciler.
import { UnrecoverableError, WaitingError, Worker, type Job, type Processor } from "bullmq";
import type { Redis } from "ioredis";
import { isUnavailableError, isUnreadableInfoAnswer, misconfiguredSetting } from "../dependency-errors.ts";
import type { Deps } from "../deps.ts";
import { createRepeatedWarning } from "../log-repeats.ts";
import { WORKER_METRICS_OPTIONS, type DeliveryMetrics } from "../metrics/index.ts";
import type { Channels } from "../notify/channels/index.ts";
import { createWorkerRedis } from "../redis.ts";
import { logRefusedSetting } from "../refused-setting.ts";
import { createConnectionFaultExit, exitWhenProducersUnusable } from "./connection-fault.ts";
import { retryScheduleBackoff } from "./disabled-notices.ts";
import { createOutageFailureLog } from "./outage-failures.ts";
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
/**
 * How long active jobs get to finish at shutdown: longer than a delivery can take (a channel's
 * 15 s timeout, the webhook host's lookup included). A delivery cut short is sent again
 * once its lock expires, and a receiver that does not deduplicate by webhook-id acts twice.
 */
export const DEFAULT_CLOSE_TIMEOUT_MS = 20_000;
/** How often a close that waits checks whether it only waits for Redis. */
const GIVE_UP_CHECK_MS = 200;

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

/**
 * Whether the process's workers may take jobs now, and a listener for each change (it returns the
 * unsubscription): the process's clock agreeing with PostgreSQL's (src/clock-watch.ts). Closed,
 * this process's workers are paused (BullMQ's Worker.pause, not the queues: other processes go
 * on taking the jobs); opened, they take jobs again.
 */
export type JobGate = { open: () => boolean; onChange: (listener: (open: boolean) => void) => () => void };

export type RunWorkersOptions = {
  queues?: readonly QueueName[];
  /** Without one the workers take jobs from the start, as BullMQ's autorun does. */
  gate?: JobGate;
  metrics?: ReadonlyArray<{ watch: (worker: Worker) => void }>;
  /** Ends the process when Redis refuses REDIS_URL or BullMQ cannot set a connection up (process.exit; tests pass their own). */
  exit?: (code: number) => void;
};

export function runWorkers(deps: WorkerDeps, options: RunWorkersOptions = {}): RunningWorkers {
  const names = options.queues ?? chosenQueues(deps.config.workerQueues);
  const gate = options.gate;
  const connections: Redis[] = [];
  // Jobs whose processor is running, per queue: what a close that runs out of time leaves behind.
  const active = new Map<QueueName, number>(names.map((name) => [name, 0]));
  // Aborted when close() is called, before the workers wait for their active jobs.
  const stopping = new AbortController();
  const consequence = "(jobs in flight run again once their locks expire)";
  // A connection BullMQ could not set up, or a refused REDIS_URL: only a new process helps
  // (src/queue/connection-fault.ts). One exit for both, whichever comes first.
  const fault = createConnectionFaultExit({
    logger: deps.logger,
    who: "worker",
    consequence,
    stopping: () => stopping.signal.aborted,
    exit: options.exit,
  });
  // The producers too (the reconciler's schedule, the jobs' follow-up jobs): one set up wrongly fails every enqueue.
  exitWhenProducersUnusable(deps.queues, fault);
  // One for all of the process's workers: a Redis outage is one problem, not one per queue.
  const warnWorkerError = createRepeatedWarning(deps.logger, "worker error");
  // While PostgreSQL or Redis is away every job fails, and runs again: hundreds a minute under
  // load, summed up once a minute (outage-failures.ts). Any other failure is logged each time,
  // and so is every job given up for good (jobFailure says which is which).
  const logOutageFailure = createOutageFailureLog(deps.logger);
  const workers = names.map((name) => {
    const connection = createWorkerRedis(deps.config.redisUrl);
    connections.push(connection);
    // BullMQ reports the connection's errors as the worker's until the worker has closed, and
    // takes its listener off then. The connection lives on until the last worker has closed
    // (close() below), reconnecting: with no listener, ioredis prints each failed attempt to
    // stderr ("[ioredis] Unhandled error event", several a second, not JSON). Ours stays, and
    // speaks only when no one else listens.
    connection.on("error", (error) => {
      if (connection.listenerCount("error") === 1) warnWorkerError(error, { queue: name });
    });
    const processor = processorFor(deps, name, stopping.signal);
    const counted: Processor = async (...args) => {
      // A paused worker that was blocked waiting for a job still takes the next one that comes
      // (BullMQ's pause() does not wake it): handed back to the head of the queue untouched, for
      // another process, or this one once its gate opens. WaitingError ends the run without a
      // failure, and a paused worker then fetches nothing more.
      const [job, token] = args;
      if (gate && !gate.open() && token !== undefined) {
        await job.moveToWait(token);
        throw new WaitingError();
      }
      active.set(name, active.get(name)! + 1);
      try {
        return await processor(...args);
      } finally {
        active.set(name, active.get(name)! - 1);
      }
    };
    const worker = new Worker(name, counted, {
      // Started below, once the gate (if any) says it may take jobs.
      autorun: false,
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
    // and logged once a minute however many reconnect attempts fail meanwhile. Except a
    // refusal of REDIS_URL (credentials rotated under a running worker) or a connection BullMQ
    // could not set up: its loop then retries without yielding, starving the event loop, so no
    // graceful close could run. Exit at once; jobs in flight run again when their locks
    // expire, or by the reconciler.
    worker.on("error", (error) => {
      const refusal = misconfiguredSetting(error);
      if (refusal) {
        return fault.exitOnce(() => logRefusedSetting(deps.logger, "worker", refusal, deps.config, `exiting ${consequence}`));
      }
      if (isUnreadableInfoAnswer(error)) return fault.exitUnusable(error, name);
      warnWorkerError(error, { queue: name });
    });
    // Settles once its connection is set up; rejects only when BullMQ gave up on it.
    worker.waitUntilReady().catch((error: unknown) => fault.exitUnusable(error, name));
    worker.on("failed", (job, error) => {
      // jobRuns: BullMQ's runs of the job, which a delivery's attempts are not (its
      // notification's attempt_count; logged as "attempts", it read 1 beside "gave up after 3 attempts").
      const fields = { queue: name, jobId: job?.id, jobRuns: job?.attemptsMade, ...subjectOf(job, error) };
      if (jobFailure(job, error) === "outage") return logOutageFailure(name, error, fields);
      // An UnrecoverableError is a job given up as designed (a schedule run out, a receiver's
      // refusal), not a crash: its words, without the stack (only where the processor threw, in
      // every line), and not as `err`, whose serializer would add one back.
      deps.logger.warn({ ...fields, ...(isUnrecoverable(error) ? { error: error.message } : { err: error }) }, "job failed");
    });
    for (const metrics of options.metrics ?? []) metrics.watch(worker);
    // As BullMQ's autorun starts it; a worker whose gate is closed is paused before it takes anything.
    if (!gate || gate.open()) worker.run().catch((error: unknown) => worker.emit("error", error as Error));
    else void worker.pause(true);
    return worker;
  });
  // Closed: each worker stops taking jobs at once (the ones it runs finish); opened: it takes them again.
  const ungate = gate?.onChange((open) => {
    for (const worker of workers) void (open ? worker.resume() : worker.pause(true));
  });

  // A queue paused from Bull Board stays paused through restarts, and its jobs only wait:
  // said once at start, when Redis first answers (wallet_alerts_queue_paused says it after).
  const warnPaused = () =>
    warnPausedQueues(deps, names).catch((error: unknown) =>
      deps.logger.debug({ err: error }, "could not tell whether the worker's queues are paused"),
    );
  if (deps.redis.status === "ready") void warnPaused();
  else deps.redis.once("ready", () => void warnPaused());

  let closing: Promise<void> | undefined;
  return {
    queues: names,
    workers,
    close: (timeoutMs = DEFAULT_CLOSE_TIMEOUT_MS) => {
      closing ??= (async () => {
        ungate?.();
        stopping.abort();
        const graceful = Promise.all(workers.map((worker) => worker.close()));
        // BullMQ never closes these (they are passed in), so one that is not ready means Redis.
        const unready = () => connections.filter((connection) => connection.status !== "ready").length;
        const running = () => [...active.values()].reduce((sum, count) => sum + count, 0);
        // With no job running and Redis away, the close only waits for Redis: stop at once.
        // BullMQ answers a second close() (close(true) too) with the first one's promise: past
        // the bound nothing cuts the close short but dropping the connections.
        if (!(await settlesWithin(graceful, timeoutMs, () => running() === 0 && unready() > 0))) {
          deps.logger.warn(...unclosedWarning(timeoutMs, active, unready()));
        }
        for (const connection of connections) connection.disconnect();
      })();
      return closing;
    },
  };
}

/**
 * How a failed run is logged. A job given up for good (UnrecoverableError: a notification whose
 * schedule ran out or that its receiver refused for good) is work that will not be done: `job
 * failed` each time, whatever its error says. An outage of our PostgreSQL or Redis is said once
 * a minute per kind (outage-failures.ts): an error of those clients only (isUnavailableError),
 * not a receiver's or provider's words in ours (a disabled-alert notice's "ECONNREFUSED: connect
 * ECONNREFUSED" when the SMTP server is away). Such a job runs again even when BullMQ's attempts
 * are spent (an outage longer than their half minute of retries): its work is still owed in
 * PostgreSQL, and the reconciler's next sweep starts it afresh. Any other job whose attempts ran
 * out is given up.
 */
export function jobFailure(job: Pick<Job, "finishedOn"> | undefined, error: unknown): "given up" | "outage" | "failed" {
  if (isUnrecoverable(error)) return "given up";
  if (isUnavailableError(error)) return "outage";
  // BullMQ stamps finishedOn only on a job it gives up (as job-metrics.ts reads it).
  return job?.finishedOn !== undefined ? "given up" : "failed";
}

function isUnrecoverable(error: unknown): error is Error {
  return error instanceof UnrecoverableError || (error as { name?: unknown } | null)?.name === "UnrecoverableError";
}

/**
 * What a failed job was about, named so in its failure's line: the notification a delivery job
 * sends (its jobId is the same id), and the alert: a disabled-alert notice's from its data, a
 * given-up delivery's, with its webhook's receiver, from the error it throws (deliver.ts givenUp).
 */
function subjectOf(job: Pick<Job, "data"> | undefined, error: unknown): { notificationId?: string; alertId?: string; receiver?: string } {
  const data = job?.data as { notificationId?: unknown; alertId?: unknown } | undefined;
  const thrown = error as { alertId?: unknown; receiver?: unknown } | null | undefined;
  const alertId = thrown?.alertId ?? data?.alertId;
  return {
    ...(typeof data?.notificationId === "string" && { notificationId: data.notificationId }),
    ...(typeof alertId === "string" && { alertId }),
    ...(typeof thrown?.receiver === "string" && { receiver: thrown.receiver }),
  };
}

/** One line per paused queue of `names`, all at once. */
async function warnPausedQueues(deps: Pick<Deps, "queues" | "logger">, names: readonly QueueName[]): Promise<void> {
  const paused = await Promise.all(names.map((name) => deps.queues[name].isPaused()));
  for (const name of names.filter((_, i) => paused[i])) {
    deps.logger.warn({ queue: name }, `queue ${name} is paused (from Bull Board?): its jobs wait until it is resumed`);
  }
}

/**
 * Why a close ran out of time, for the log. With Redis answering it was a job that took
 * longer: say which queues, and that nothing is lost. Only a connection that is not ready
 * points at Redis.
 */
export function unclosedWarning(
  timeoutMs: number,
  active: ReadonlyMap<QueueName, number>,
  unreadyConnections: number,
): [Record<string, unknown>, string] {
  const activeJobs = Object.fromEntries([...active].filter(([, count]) => count > 0));
  const fields = { timeoutMs, activeJobs, unreadyConnections };
  if (unreadyConnections > 0) {
    return [fields, `workers did not close: Redis is not reachable (${unreadyConnections} of their connections are not ready); stopping without them`];
  }
  const queues = Object.entries(activeJobs).map(([queue, count]) => `${queue} (${count})`);
  if (queues.length === 0) return [fields, `workers did not close within ${timeoutMs} ms; stopping without them`];
  return [
    fields,
    `active jobs did not finish within ${timeoutMs} ms: ${queues.join(", ")}; stopping without them — they run again once their locks expire (on another worker, or on this one after a restart)`,
  ];
}

/**
 * True when `work` settles (either way) within `ms`; false at the deadline, or earlier once
 * `pointless()` says waiting on cannot help. A later rejection is ignored.
 */
async function settlesWithin(work: Promise<unknown>, ms: number, pointless: () => boolean = () => false): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  let poll: NodeJS.Timeout | undefined;
  const settled = work.then(
    () => true,
    () => true,
  );
  const deadline = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
    poll = setInterval(() => pointless() && resolve(false), GIVE_UP_CHECK_MS);
  });
  try {
    return await Promise.race([settled, deadline]);
  } finally {
    clearTimeout(timer);
    clearInterval(poll);
  }
}
