// npm run start:worker — evaluation, risk scoring, the reconciler and delivery, for the
// queues in WORKER_QUEUES (all by default). Run as many as you like: BullMQ shares the work.
import { loadConfigOrExit } from "./config-or-exit.ts";
import { preflightOrExit } from "./preflight-or-exit.ts";
import { exitOnListenFailure } from "./exit-on-listen-failure.ts";
import { WORKER_CLOCK_ROLE } from "../clock-watch.ts";
import { reportAutovacuumAtStart } from "../db/autovacuum.ts";
import { reportDatabaseAtStart } from "../db/schema-version.ts";
import { createDeps } from "../deps.ts";
import {
  createDeliveryMetrics,
  createEvaluationMetrics,
  createJobMetrics,
  createMetricsRegistry,
  registerClockOffsetGauge,
  startMetricsServer,
  type MetricsServer,
} from "../metrics/index.ts";
import { createChannels } from "../notify/channels/index.ts";
import { keepReconcileScheduled, upsertReconcileSchedule, type ScheduleKeeper } from "../pipeline/reconcile-schedule.ts";
import { watchActivityCounters, type CountersWatch } from "../pipeline/activity-reseed-watch.ts";
import { channelsOff, channelsOffWarning } from "../notify/transports.ts";
import { DELIVERY_QUEUE, QUEUES } from "../queue/names.ts";
import { chosenQueues, runWorkers, type RunningWorkers } from "../queue/run-workers.ts";
import { checkReadinessEvery, createReadinessCheck } from "../readiness.ts";
import { onStopSignal } from "../signals.ts";

const config = loadConfigOrExit({ worker: true });
const deps = createDeps(config);
const queues = queuesOrExit();
const channels = createChannels(config, deps.logger);
const registry = createMetricsRegistry();
const jobMetrics = createJobMetrics(registry);
const metrics = [jobMetrics, createEvaluationMetrics(registry, deps.alertRules)];
registerClockOffsetGauge(registry, deps.clockSkew);
// One check for /readyz and for the worker's own probe below, so that each logs a change once.
const readiness = createReadinessCheck(deps);
/** How often the worker checks its readiness by itself, for the log (a frozen PostgreSQL is said nowhere else). */
const SELF_CHECK_MS = 10_000;
let selfCheck: { stop: () => void } | undefined;
let running: RunningWorkers | undefined;
let keeper: ScheduleKeeper | undefined;
let countersWatch: CountersWatch | undefined;
let metricsServer: MetricsServer | undefined;
let stopping = false;
// Before any wait below: a start that waits for Redis can last as long as the outage, and a
// SIGTERM meanwhile must stop the workers already running, not kill the process.
onStopSignal(
  async () => {
    stopping = true;
    selfCheck?.stop();
    keeper?.stop();
    countersWatch?.stop();
    // Active jobs get a bounded time to finish; the rest are taken over by other workers.
    await running?.close();
    await Promise.all([channels.close(), metricsServer?.close()]);
    await deps.close();
  },
  (message) => deps.logger.info(message),
);
if (config.workerMetricsPort !== undefined) {
  const port = config.workerMetricsPort;
  metricsServer = await startMetricsServer(registry, port, config.admin, config.host, readiness).catch((error: unknown) => {
    stopping = true;
    return exitOnListenFailure(error, {
      logger: deps.logger,
      who: "worker",
      portSetting: "WORKER_METRICS_PORT",
      port,
      host: config.host,
      close: async () => {
        await channels.close();
        await deps.close();
      },
    });
  });
}

// Before the workers: settings that PostgreSQL or Redis refuse stop the process here, with one
// line naming them. BullMQ's loop retries a refused connection without yielding: the worker
// spun at 100 % CPU, deaf to SIGTERM, after a single "worker error".
const reachable = await preflightOrExit(deps, "worker");
// A stop that came during the check has closed the connections: nothing is left to start.
if (!stopping) {
  // This process's clock against PostgreSQL's, before the workers: a host whose clock is more
  // than 5 s off takes no job, not even its first (a webhook it signed would be refused for good),
  // and none until a measurement has succeeded; measured every 30 s after (src/clock-watch.ts).
  await deps.clockSkew.start(WORKER_CLOCK_ROLE);
}
if (!stopping) {
  // An evaluation worker notices a Redis that lost the activity counters (warns once, naming
  // `npm run reseed-activity`); checked before it evaluates, so a new deployment is marked first.
  if (queues.includes(QUEUES.transactions)) countersWatch = await watchActivityCounters(deps, { registry });
}
if (!stopping) {
  running = runWorkers({ ...deps, channels, deliveryMetrics: createDeliveryMetrics(registry, jobMetrics) }, {
    queues,
    metrics,
    gate: { open: () => deps.clockSkew.agrees(), onChange: (listener) => deps.clockSkew.onChange(listener) },
  });
  // The reconciler's schedule is (re)made by every worker at start and kept alive on a timer,
  // so a Redis that lost it gets it back (src/pipeline/reconcile-schedule.ts).
  keeper = keepReconcileScheduled(deps);
  selfCheck = checkReadinessEvery(readiness, SELF_CHECK_MS);
  // Without Redis the workers wait for it; say so, or the missing "worker started" looks like a hang.
  if (reachable.redis === "unreachable") deps.logger.warn("Redis is not reachable yet; the worker starts when it is");
  await upsertReconcileSchedule(deps.queues).catch((error: unknown) =>
    deps.logger.warn({ err: error }, "could not create the reconciler schedule yet; retrying on a timer"),
  );
  deps.logger.info({ queues: running.queues, channels: channels.describe(), metricsPort: metricsServer?.port }, "worker started");
  // A channel without a provider fails each of its notifications unsent: said at warn, so that a
  // forgotten or misspelled SMTP_URL or TWILIO_* stands out among the start lines.
  const offWarning = channelsOffWarning(channelsOff(config).filter((channel) => queues.includes(DELIVERY_QUEUE[channel])));
  if (offWarning) deps.logger.warn({ channels: channels.describe() }, offWarning);
  await reportDatabaseAtStart(deps.sql, deps.logger, "worker", "its jobs fail and are retried until it is");
  // A PostgreSQL without autovacuum fails no job and fills the disk (src/db/autovacuum.ts).
  await reportAutovacuumAtStart(deps.sql, deps.logger, "worker");
}

function queuesOrExit() {
  try {
    return chosenQueues(config.workerQueues);
  } catch (error) {
    // A fatal log line, as a refused setting's: a plain one was missed by JSON log pipelines.
    deps.logger.fatal({ setting: "WORKER_QUEUES" }, (error as Error).message);
    process.exit(1);
  }
}
