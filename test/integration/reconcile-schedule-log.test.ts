// The reconciler schedule's keeper while Redis cannot be reached: it says so once a minute,
// as the other repeating failures do, and with the connection's own error, not ioredis's
// "Stream isn't writeable" (a worker on a dead Redis said that every 30 s).
import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../src/logger.ts";
import { keepReconcileScheduled } from "../../src/pipeline/reconcile-schedule.ts";
import { closeQueues, createQueues, type Queues } from "../../src/queue/producers.ts";
import { createCommandRedis } from "../../src/redis.ts";
import { freePort } from "../helpers/ports.ts";
import { waitFor } from "../helpers/wait.ts";

type Line = { level: number; msg: string; err?: { message?: string; code?: string }; repeatsNotLogged?: number };

const lines: Line[] = [];
let redis: ReturnType<typeof createCommandRedis>;
let queues: Queues;

beforeAll(async () => {
  // A port nothing listens on: every connection attempt is refused.
  redis = createCommandRedis(`redis://127.0.0.1:${await freePort()}`, { retryStrategy: () => 50 });
  redis.on("error", () => {});
  queues = createQueues(redis, "{reconcile-schedule-log}");
  for (const queue of Object.values(queues)) queue.on("error", () => {});
});
afterAll(async () => {
  await closeQueues(queues).catch(() => {});
  redis.disconnect();
});

describe("the reconciler schedule's keeper on a Redis that refuses connections", () => {
  it("warns once for many failed refreshes, naming the refused connection", async () => {
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(JSON.parse(chunk.toString()) as Line);
        done();
      },
    });
    const keeper = keepReconcileScheduled({ redis, queues, logger: createLogger("debug", sink), config: { queuePrefix: "{reconcile-schedule-log}" } }, 20);
    try {
      await waitFor("ten failed refreshes", async () => lines.filter((line) => line.msg.startsWith("could not refresh")).length >= 10);
    } finally {
      keeper.stop();
    }
    const warnings = lines.filter((line) => line.level === 40 && line.msg === "could not refresh the reconciler schedule");
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.err?.code ?? warnings[0]!.err?.message).toMatch(/ECONNREFUSED/);
  });
});
