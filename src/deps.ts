// Builds the connections a process needs, once, and hands them around explicitly.
import type { Redis } from "ioredis";
import { createClockSkewWatch, type ClockSkewWatch } from "./clock-watch.ts";
import type { Config } from "./config.ts";
import { createDb, type Database, type Sql } from "./db/client.ts";
import { createLogger, type Logger } from "./logger.ts";
import { createAlertRules, type AlertRules } from "./pipeline/alert-rules.ts";
import { closeQueues, createQueues, type Queues } from "./queue/producers.ts";
import { createCommandRedis } from "./redis.ts";

export type Clock = () => Date;

export type Deps = {
  config: Config;
  logger: Logger;
  db: Database;
  sql: Sql;
  /** Fail-fast command connection (rate limits, counters, producers). */
  redis: Redis;
  queues: Queues;
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

/** dbPoolSize: a test's or benchmark's own pool size, in place of DATABASE_POOL_SIZE. */
export type DepsOverrides = Partial<Pick<Deps, "logger" | "now">> & { dbPoolSize?: number };

export function createDeps(config: Config, overrides: DepsOverrides = {}): Deps {
  const logger = overrides.logger ?? createLogger(config.logLevel);
  const { db, sql } = createDb(config.databaseUrl, { max: overrides.dbPoolSize ?? config.databasePoolSize });
  const redis = createCommandRedis(config.redisUrl);
  // A dead Redis is reported through failing requests and /readyz; without a listener
  // ioredis would print every reconnect error as an unhandled 'error' event.
  redis.on("error", (error) => logger.debug({ err: error }, "redis connection error"));
  const queues = createQueues(redis, config.queuePrefix);
  // Likewise for the queues, which BullMQ would otherwise print to stderr on every failed write.
  for (const queue of Object.values(queues)) {
    queue.on("error", (error) => logger.debug({ err: error }, "queue connection error"));
  }
  const clockSkew = createClockSkewWatch({ sql, redis, logger });
  let closed = false;
  return {
    config,
    logger,
    db,
    sql,
    redis,
    queues,
    alertRules: createAlertRules(sql, logger),
    now: overrides.now ?? (() => new Date()),
    clockSkew,
    close: async () => {
      if (closed) return;
      closed = true;
      clockSkew.stop();
      await closeQueues(queues).catch(() => {});
      redis.disconnect();
      await sql.end({ timeout: 5 });
    },
  };
}
