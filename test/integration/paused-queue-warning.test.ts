// A queue paused from Bull Board stays paused through worker restarts (the flag lives in Redis)
// and its jobs only wait: a worker says so in its log when it starts, for each queue it serves.
import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.ts";
import { createDeps } from "../../src/deps.ts";
import { createLogger } from "../../src/logger.ts";
import { createChannels } from "../../src/notify/channels/index.ts";
import { QUEUES } from "../../src/queue/names.ts";
import { closeQueues, createQueues, type Queues } from "../../src/queue/producers.ts";
import { runWorkers } from "../../src/queue/run-workers.ts";
import { createWorkerRedis } from "../../src/redis.ts";
import { testEnv } from "../helpers/app.ts";
import { uniqueQueuePrefix } from "../helpers/db.ts";
import { TEST_REDIS_URL } from "../helpers/env.ts";
import { deletePrefixKeysAt } from "../helpers/redis-keys.ts";
import { waitFor } from "../helpers/wait.ts";

const prefix = uniqueQueuePrefix("paused-queue-warning");
// No job runs here: the database is never connected to.
const config = loadConfig(testEnv({ DATABASE_URL: "postgres://postgres@127.0.0.1:5432/unused", QUEUE_PREFIX: prefix }));
const SERVED = [QUEUES.deliverWebhook, QUEUES.risk];

let redis: ReturnType<typeof createWorkerRedis>;
let queues: Queues;
beforeAll(() => {
  redis = createWorkerRedis(TEST_REDIS_URL);
  queues = createQueues(redis, prefix);
});
afterAll(async () => {
  await closeQueues(queues);
  redis.disconnect();
  await deletePrefixKeysAt(TEST_REDIS_URL, prefix);
});

type LogLine = { level: number; msg: string; queue?: string };

/** Starts a worker process's workers for SERVED and returns the paused warnings of its log once it has logged any. */
async function pausedWarningsAtStart(): Promise<LogLine[]> {
  const lines: LogLine[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as LogLine);
      done();
    },
  });
  const deps = createDeps(config, { logger: createLogger("info", sink) });
  const channels = createChannels(config, deps.logger);
  const running = runWorkers({ ...deps, channels }, { queues: SERVED });
  const paused = () => lines.filter((line) => line.msg.includes(" is paused"));
  try {
    // The worker logs all of its paused queues at once: the first one seen means all of them.
    await waitFor("a paused queue's warning", async () => paused().length > 0, 10_000);
    return paused();
  } finally {
    await running.close();
    await channels.close();
    await deps.close();
  }
}

describe("a worker starting on a paused queue", () => {
  it("warns at start for each queue it serves that is paused, and no more once that queue is resumed", async () => {
    await queues[QUEUES.deliverWebhook].pause();
    // Not served by this worker: not its to report.
    await queues[QUEUES.transactions].pause();
    try {
      expect(await pausedWarningsAtStart()).toEqual([
        expect.objectContaining({
          level: 40,
          queue: "deliver-webhook",
          msg: "queue deliver-webhook is paused (from Bull Board?): its jobs wait until it is resumed",
        }),
      ]);

      // Resumed, and another served queue paused so that the warnings of this start can be awaited.
      await queues[QUEUES.deliverWebhook].resume();
      await queues[QUEUES.risk].pause();
      expect(await pausedWarningsAtStart()).toEqual([
        expect.objectContaining({ level: 40, queue: "risk", msg: "queue risk is paused (from Bull Board?): its jobs wait until it is resumed" }),
      ]);
    } finally {
      await Promise.all(Object.values(queues).map((queue) => queue.resume()));
    }
  });
});
