// npm run queues — jobs per queue and state (waiting, active, delayed, failed, completed),
// and which queues are paused (PAUSED), read from the Redis and queue prefix of the
// configuration. Exits non-zero when Redis cannot be reached, refuses REDIS_URL or does not
// answer in time (saying why), so it also serves as a check in scripts; a paused queue is
// not a failure of the check (it exits 0 and says so).
import type { Redis } from "ioredis";
import { loadQueuesConfig } from "../config.ts";
import { orExit } from "./config-or-exit.ts";
import { describeRefusal, errorSummary, misconfiguredSetting } from "../dependency-errors.ts";
import { formatQueueTable, readQueueStatus, type QueueStatus } from "../metrics/queue-counts.ts";
import { PREFLIGHT_TIMEOUT_MS } from "../preflight.ts";
import { closeQueues, createQueues } from "../queue/producers.ts";
import { redactUrl } from "../redact-url.ts";
import { createCommandRedis, databaseRefusalOf, trackConnectionError } from "../redis.ts";
import { TimedOut, withTimeout } from "../with-timeout.ts";

/**
 * The whole command's bound, connection and counts together, as long as the processes' start-up
 * check gives Redis: connectTimeout covers only the TCP connect, so a server that accepts the
 * connection and never answers (hung, SIGSTOP'd, a wrong port that speaks another protocol)
 * would keep a script that asks "is Redis up?" waiting forever.
 */
const ANSWER_TIMEOUT_MS = PREFLIGHT_TIMEOUT_MS;

const config = orExit(() => loadQueuesConfig());

// One connection attempt (bounded by the connect timeout), no retries: a dead Redis is the answer.
const redis = createCommandRedis(config.redisUrl, { retryStrategy: () => null });
// The connection's error is told once, below, as the reason; ioredis would print it unasked.
const connectionError = trackConnectionError(redis);
const where = redactUrl(config.redisUrl);
try {
  const rows = await withTimeout(() => countJobs(redis), ANSWER_TIMEOUT_MS, "the server");
  console.log(`Redis ${where}, queue prefix ${config.queuePrefix} ("waiting" includes prioritized jobs)\n`);
  console.log(formatQueueTable(rows));
} catch (error) {
  // A refusal the connection reported explains a timeout better than the timeout does.
  console.error(error instanceof TimedOut ? whyNotConnected(connectionError() ?? error) : (error as Error).message);
  process.exitCode = 1;
} finally {
  // Also ends what a timed-out attempt left waiting on the connection, so the process exits.
  redis.disconnect();
  // The verdict is out: whatever a timed-out attempt still holds open (a queue closing on a
  // server that never answers kept the process 4 s past it) must not delay the exit. Unref'd:
  // a process with nothing left open exits at once without it.
  setTimeout(() => process.exit(), 100).unref();
}

async function countJobs(connection: Redis): Promise<QueueStatus[]> {
  if (!(await connected(connection))) throw new Error(whyNotConnected(connectionError()));
  const queues = createQueues(connection, config.queuePrefix);
  try {
    return await readQueueStatus(queues);
  } finally {
    await closeQueues(queues);
  }
}

function connected(connection: Redis): Promise<boolean> {
  return new Promise((resolve) => {
    connection.once("ready", () => resolve(true));
    connection.once("end", () => resolve(false));
  });
}

function whyNotConnected(error: unknown): string {
  // Redis answered, and refused the database number: the network is fine, REDIS_URL is not.
  const database = databaseRefusalOf(redis);
  if (database) return `Redis at ${where} refused REDIS_URL's database: ${database.message} — check the database number in REDIS_URL`;
  const refused = misconfiguredSetting(error);
  if (refused) return `${describeRefusal(refused)} — check REDIS_URL (${where})`;
  return `Redis at ${where} cannot be reached${error ? ` (${errorSummary(error)})` : ""}`;
}
