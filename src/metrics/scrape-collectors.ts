// Gauges computed when Prometheus scrapes, from the stores themselves: every API process
// reports the same truth (queue depth and paused queues from Redis; notifications, the webhook
// receivers retrying, evaluation lag and autovacuum's settings from PostgreSQL) however many
// processes there are and whichever of them did the work (so a rule over them takes `max by`,
// not `sum`, which counts it once per process).
// A store that does not answer leaves its gauge without samples for that scrape
// (and a warning in the log, once a minute per kind of error: Prometheus scrapes all through
// an outage) instead of failing the whole scrape.
import { Gauge, type Registry } from "prom-client";
import type { Deps } from "../deps.ts";
import { autovacuumBlockers, readAutovacuumSettings } from "../db/autovacuum.ts";
import { NOTIFICATION_METHODS } from "../domain/types.ts";
import { registerClockOffsetGauge } from "./clock-metrics.ts";
import { registerIngestAdmissionMetrics } from "./ingest-admission-metrics.ts";
import { readPausedQueues, readQueueCounts } from "./queue-counts.ts";
import { countRetryingWebhookReceivers } from "./retrying-receivers.ts";
import { registerReconcileSweepGauge } from "./reconcile-sweep.ts";
import { createRepeatedWarning } from "../log-repeats.ts";
import { withTimeout } from "../with-timeout.ts";
import { METRIC_PREFIX } from "./registry.ts";

const SCRAPE_TIMEOUT_MS = 2_000;
const OPEN_STATUSES = ["pending", "retrying"] as const;

/**
 * PostgreSQL is read through monitorSql, never the request pool: under an ingest flood every
 * request-pool connection was held, each gauge waited past its bound, and the lag went absent
 * from every scrape exactly while it grew (and the page blamed the stores).
 */
export type ScrapeDeps = Pick<Deps, "monitorSql" | "queues" | "logger" | "clockSkew"> & Partial<Pick<Deps, "ingestAdmission">>;

export function registerScrapeCollectors(registry: Registry, deps: ScrapeDeps): void {
  // Not from the stores, and this process's own: beside them because the API's /metrics is made here.
  registerClockOffsetGauge(registry, deps.clockSkew);
  // This process's too, read from its ingest admission at scrape time (the API's: its routes use it).
  if (deps.ingestAdmission) registerIngestAdmissionMetrics(registry, deps.ingestAdmission);
  const sql = deps.monitorSql;
  const warnings = new Map<string, ReturnType<typeof createRepeatedWarning>>();
  const warn = (source: string, error: unknown) => {
    let warning = warnings.get(source);
    if (!warning) {
      warning = createRepeatedWarning(deps.logger, `metrics: ${source} could not be read for this scrape`);
      warnings.set(source, warning);
    }
    warning(error);
  };
  const attempt = async (gauge: Gauge, source: string, fill: () => Promise<void>) => {
    withoutSamples(gauge);
    try {
      await withTimeout(fill, SCRAPE_TIMEOUT_MS, source);
    } catch (error) {
      withoutSamples(gauge);
      warn(source, error);
    }
  };

  new Gauge({
    name: `${METRIC_PREFIX}queue_jobs`,
    help: "Jobs in each BullMQ queue by state (waiting, prioritized, active, delayed, failed, completed, waiting-children), read from Redis at scrape time.",
    labelNames: ["queue", "state"],
    registers: [registry],
    async collect() {
      await attempt(this, "Redis (queue counts)", async () => {
        for (const { queue, counts } of await readQueueCounts(deps.queues)) {
          for (const [state, count] of Object.entries(counts)) this.set({ queue, state }, count);
        }
      });
    },
  });

  // Beside the counts: a queue paused from Bull Board keeps its jobs waiting through every
  // worker restart, and its counts alone read like a slow worker. Same source as the counts,
  // so a Redis outage is one warning a minute, not two.
  new Gauge({
    name: `${METRIC_PREFIX}queue_paused`,
    help: "1 for a BullMQ queue that is paused (Bull Board's Pause: no worker takes its jobs until it is resumed), 0 otherwise; read from Redis at scrape time.",
    labelNames: ["queue"],
    registers: [registry],
    async collect() {
      await attempt(this, "Redis (queue counts)", async () => {
        for (const { queue, paused } of await readPausedQueues(deps.queues)) this.set({ queue }, paused ? 1 : 0);
      });
    },
  });

  new Gauge({
    name: `${METRIC_PREFIX}notifications`,
    help: "Notifications still open in PostgreSQL, by channel (email, webhook, sms) and status (pending, retrying). Finished ones are counted by the workers: wallet_alerts_delivery_attempts_total.",
    labelNames: ["channel", "status"],
    registers: [registry],
    async collect() {
      await attempt(this, "PostgreSQL (notification counts)", async () => {
        // Open ones only, found through their partial index (its predicate spelled out, not
        // bound, so that every plan can use it): finished ones pile up for ever.
        const rows = await sql<{ channel: string; status: string; count: number }[]>`
          select channel, status, count(*)::int as count from notifications
          where status in ('pending', 'retrying') group by channel, status`;
        // Every known pair is present (0 when none), so alerts see a series from the start.
        for (const channel of NOTIFICATION_METHODS) {
          for (const status of OPEN_STATUSES) this.set({ channel, status }, 0);
        }
        for (const row of rows) this.set({ channel: row.channel, status: row.status }, row.count);
      });
    },
  });

  // Beside the webhook backlog: from how many receivers. One customer's receiver that is down
  // (a ticket: its owner fixes it) is 1 however large its backlog; the worker's own network or
  // DNS failing is every receiver with traffic (a page). See retrying-receivers.ts.
  new Gauge({
    name: `${METRIC_PREFIX}webhook_receivers_retrying`,
    help: "Webhook receivers (a registrable domain or an address, as the worker's log names them) with at least one notification waiting to be tried again; no sample when PostgreSQL could not be read.",
    registers: [registry],
    async collect() {
      await attempt(this, "PostgreSQL (webhook receivers retrying)", async () => {
        this.set(await countRetryingWebhookReceivers(sql));
      });
    },
  });

  // How late deliveries are, which the counts cannot say: a backlog of 50 is nothing at
  // 1,000 a second and an outage at none. Pending only (never attempted yet): a retrying
  // notification to a receiver that is down is old by the retry schedule's design. Due only,
  // and old from when it fell due: a cooldown digest (cooldown-digest.ts) is pending from its
  // window's first held-back event to the cooldown's end on purpose, and counted from its
  // creation it tripped the alert on this gauge with every cooldown longer than a minute.
  new Gauge({
    name: `${METRIC_PREFIX}notification_oldest_pending_seconds`,
    help: "Seconds since the oldest notification due and not yet attempted fell due (its creation, or its next_attempt_at if later: a cooldown digest's cooldown end), by channel (0 when none waits; no sample when PostgreSQL could not be read).",
    labelNames: ["channel"],
    registers: [registry],
    async collect() {
      await attempt(this, "PostgreSQL (oldest pending notification)", async () => {
        // greatest() passes over a null next_attempt_at: due since its creation.
        const rows = await sql<{ channel: string; age: number }[]>`
          select channel, extract(epoch from now() - min(greatest(created_at, next_attempt_at)))::float8 as age from notifications
          where status in ('pending') and (next_attempt_at is null or next_attempt_at <= now()) group by channel`;
        for (const channel of NOTIFICATION_METHODS) this.set({ channel }, 0);
        for (const row of rows) this.set({ channel: row.channel }, Math.max(0, row.age));
      });
    },
  });

  // Retrying ones, which the gauge above leaves out: for email and SMS mostly our own provider's
  // outage (the SMTP server or Twilio unreachable, busy or failing), which keeps even one
  // notification undelivered, and which the counts only show once there are many. Old from when
  // it fell due, as above (a cooldown digest from its cooldown's end); a redelivered one from its
  // creation. For webhooks, a receiver that is down makes it old by its retry schedule's design.
  new Gauge({
    name: `${METRIC_PREFIX}notification_oldest_retrying_seconds`,
    help: "Seconds since the oldest notification that failed and waits to be tried again fell due (its creation, or a cooldown digest's cooldown end), by channel (0 when none retries; no sample when PostgreSQL could not be read).",
    labelNames: ["channel"],
    registers: [registry],
    async collect() {
      await attempt(this, "PostgreSQL (oldest retrying notification)", async () => {
        const rows = await sql<{ channel: string; age: number }[]>`
          select n.channel, extract(epoch from now() - min(greatest(n.created_at, d.window_end)))::float8 as age
          from notifications n left join cooldown_digests d on d.notification_id = n.id
          where n.status in ('retrying') group by n.channel`;
        for (const channel of NOTIFICATION_METHODS) this.set({ channel }, 0);
        for (const row of rows) this.set({ channel: row.channel }, Math.max(0, row.age));
      });
    },
  });

  new Gauge({
    name: `${METRIC_PREFIX}evaluation_lag_seconds`,
    help: "Seconds since the oldest ingest batch that is not evaluated yet was stored (0 when every batch is evaluated; no sample when PostgreSQL could not be read).",
    registers: [registry],
    async collect() {
      await attempt(this, "PostgreSQL (evaluation lag)", async () => {
        // The partial index on unevaluated batches makes this a single index probe.
        const [row] = await sql<{ lag: number | null }[]>`
          select extract(epoch from now() - min(created_at))::float8 as lag
          from ingest_batches where evaluated_at is null`;
        this.set(Math.max(0, row?.lag ?? 0));
      });
    },
  });

  // When the reconciler last swept (reconcile-sweep.ts): from Redis, as the queue counts.
  registerReconcileSweepGauge(registry, deps.queues, attempt);

  // Read at every scrape (two settings, no table): a reload that turns autovacuum off shows
  // within a scrape, and a process that could not read it at start still tells it here.
  new Gauge({
    name: `${METRIC_PREFIX}postgres_autovacuum_off`,
    help: "1 when PostgreSQL's autovacuum cannot run for the service's sessions (autovacuum or track_counts off): dead rows are never reclaimed and the database grows without bound; 0 when it runs; no sample when PostgreSQL could not be read.",
    registers: [registry],
    async collect() {
      await attempt(this, "PostgreSQL (autovacuum settings)", async () => {
        this.set(autovacuumBlockers(await readAutovacuumSettings(sql)).length > 0 ? 1 : 0);
      });
    },
  });
}

/**
 * Leaves a gauge with no sample at all, so that a scrape goes out without it (and Prometheus's
 * absent() sees that). Gauge.reset() alone does not for a gauge without labels: prom-client 15
 * re-creates its one sample at 0, and the evaluation lag then read "nothing behind" whenever
 * PostgreSQL could not be read. remove({}) drops that label-less sample (a gauge with labels
 * has none under no labels: nothing to drop).
 */
function withoutSamples(gauge: Gauge): void {
  gauge.reset();
  gauge.remove({});
}
