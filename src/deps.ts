// Builds the connections a process needs, once, and hands them around explicitly.
import type { Redis } from "ioredis";
import { createClockSkewWatch, type ClockSkewWatch } from "./clock-watch.ts";
import type { Config } from "./config.ts";
import { createDb, type Database, type Sql } from "./db/client.ts";
import { createIngestAdmission, ingestAdmissionLimits, type IngestAdmission } from "./http/ingest-admission.ts";
import { createLogger, type Logger } from "./logger.ts";
import { createAlertRules, type AlertRules } from "./pipeline/alert-rules.ts";
import { closeQueues, createQueues, type Queues } from "./queue/producers.ts";
import { createCommandRedis } from "./redis.ts";

export type Clock = () => Date;

export type Deps = {
  config: Config;
  logger: Logger;
  db: Database;
  /** The request pool (DATABASE_POOL_SIZE): requests, jobs, everything that does the work. */
  sql: Sql;
  /**
   * The process's own health and monitoring reads (readiness, /metrics' PostgreSQL gauges, the
   * clock measurement), on MONITOR_POOL_SIZE connections of their own: when ingest holds every
   * request-pool connection (waiting on each other's row locks under a flood), those reads
   * waited behind it, /readyz said 503 and the lag gauge went absent, while PostgreSQL answered.
   */
  monitorSql: Sql;
  /** Fail-fast command connection (rate limits, counters, producers). */
  redis: Redis;
  queues: Queues;
  /** Ingest requests storing at once in this process, and those waiting for a turn (ingest-admission.ts): the API's. */
  ingestAdmission: IngestAdmission;
  /** The active alerts as the evaluation workers keep them (loaded on first use). */
  alertRules: AlertRules;
  now: Clock;
  /**
   * This process's clock against PostgreSQL's (clock-watch.ts): made here, measured only once a
   * process starts it (src/bin/api.ts, src/bin/worker.ts); /readyz and /metrics read it.
   */
  clockSkew: ClockSkewWatch;
  close: () => Promise<void>;
};

/**
 * Connections of the monitor pool: the readiness check runs its two statements one after the
 * other and a scrape its gauges side by side, each a read of an index or a setting; two are
 * enough, and every process counts them against max_connections (README, Production settings).
 */
export const MONITOR_POOL_SIZE = 2;

/** dbPoolSize: a test's or benchmark's own pool size, in place of DATABASE_POOL_SIZE. */
export type DepsOverrides = Partial<Pick<Deps, "logger" | "now">> & { dbPoolSize?: number };

export function createDeps(config: Config, overrides: DepsOverrides = {}): Deps {
  const logger = overrides.logger ?? createLogger(config.logLevel);
  const poolSize = overrides.dbPoolSize ?? config.databasePoolSize;
  const { db, sql } = createDb(config.databaseUrl, { max: poolSize });
  const { sql: monitorSql } = createDb(config.databaseUrl, { max: MONITOR_POOL_SIZE, applicationNameSuffix: "monitor" });
  const redis = createCommandRedis(config.redisUrl);
  // A dead Redis is reported through failing requests and /readyz; without a listener
  // ioredis would print every reconnect error as an unhandled 'error' event.
  redis.on("error", (error) => logger.debug({ err: error }, "redis connection error"));
  const queues = createQueues(redis, config.queuePrefix);
  // Likewise for the queues, which BullMQ would otherwise print to stderr on every failed write.
  for (const queue of Object.values(queues)) {
    queue.on("error", (error) => logger.debug({ err: error }, "queue connection error"));
  }
  // On the monitor pool too: a measurement that waited for a request-pool connection failed,
  // or came back with the wait in its uncertainty.
  const clockSkew = createClockSkewWatch({ sql: monitorSql, redis, logger });
  let closed = false;
  return {
    config,
    logger,
    db,
    sql,
    monitorSql,
    redis,
    queues,
    ingestAdmission: createIngestAdmission(ingestAdmissionLimits({ databasePoolSize: poolSize, ingestConcurrency: config.ingestConcurrency })),
    alertRules: createAlertRules(sql, logger),
    now: overrides.now ?? (() => new Date()),
    clockSkew,
    close: async () => {
      if (closed) return;
      closed = true;
      clockSkew.stop();
      await closeQueues(queues).catch(() => {});
      redis.disconnect();
      await Promise.all([sql.end({ timeout: 5 }), monitorSql.end({ timeout: 5 })]);
    },
  };
}
