// npm run queues — jobs per queue and state (waiting, active, delayed, failed, completed),
// read from the Redis and queue prefix of the configuration. Exits non-zero when Redis
// cannot be reached or refuses REDIS_URL (saying why), so it also serves as a check in scripts.
import type { Redis } from "ioredis";
import { loadQueuesConfig } from "../config.ts";
import { orExit } from "./config-or-exit.ts";
import { describeRefusal, errorSummary, misconfiguredSetting } from "../dependency-errors.ts";
import { formatQueueTable, readQueueCounts } from "../metrics/queue-counts.ts";
import { closeQueues, createQueues } from "../queue/producers.ts";
import { redactUrl } from "../redact-url.ts";
import { createCommandRedis, trackConnectionError } from "../redis.ts";

const config = orExit(() => loadQueuesConfig());

// One connection attempt (bounded by the connect timeout), no retries: a dead Redis is the answer.
const redis = createCommandRedis(config.redisUrl, { retryStrategy: () => null });
// The connection's error is told once, below, as the reason; ioredis would print it unasked.
const connectionError = trackConnectionError(redis);
const where = redactUrl(config.redisUrl);
try {
  if (!(await connected(redis))) throw new Error(whyNotConnected(connectionError()));
  const queues = createQueues(redis, config.queuePrefix);
  try {
    const rows = await readQueueCounts(queues);
    console.log(`Redis ${where}, queue prefix ${config.queuePrefix} ("waiting" includes prioritized jobs)\n`);
    console.log(formatQueueTable(rows));
  } finally {
    await closeQueues(queues);
  }
} catch (error) {
  console.error((error as Error).message);
  process.exitCode = 1;
} finally {
  redis.disconnect();
}

function connected(connection: Redis): Promise<boolean> {
  return new Promise((resolve) => {
    connection.once("ready", () => resolve(true));
    connection.once("end", () => resolve(false));
  });
}

function whyNotConnected(error: unknown): string {
  const refused = misconfiguredSetting(error);
  if (refused) return `${describeRefusal(refused)} — check REDIS_URL (${where})`;
  return `Redis at ${where} cannot be reached${error ? ` (${errorSummary(error)})` : ""}`;
}
