import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createQueues, closeQueues, type Queues } from "../../src/queue/producers.ts";
import { createWorkerRedis } from "../../src/redis.ts";
import { uniqueQueuePrefix } from "../helpers/db.ts";
import { TEST_JWT_SECRET, TEST_REDIS_URL } from "../helpers/env.ts";
import { startPasswordRedis } from "../helpers/redis-server.ts";
import { startSilentRedis } from "../helpers/silent-redis.ts";

const run = promisify(execFile);
const prefix = uniqueQueuePrefix("queues-cli");
const env = (redisUrl: string) => ({
  PATH: process.env.PATH ?? "",
  DATABASE_URL: "postgres://postgres@127.0.0.1:5432/unused",
  REDIS_URL: redisUrl,
  JWT_SECRET: TEST_JWT_SECRET,
  QUEUE_PREFIX: prefix,
});
const queuesCommand = (redisUrl: string, environment: Record<string, string> = env(redisUrl)) =>
  run(process.execPath, ["--import", "tsx", "src/bin/queues.ts"], { env: environment, timeout: 20_000 });

let redis: ReturnType<typeof createWorkerRedis>;
let queues: Queues;
beforeAll(async () => {
  redis = createWorkerRedis(TEST_REDIS_URL);
  queues = createQueues(redis, prefix);
  await queues.transactions.addBulk([
    { name: "evaluate", data: { batchId: "bat_1" } },
    { name: "evaluate", data: { batchId: "bat_2" } },
    { name: "evaluate", data: { batchId: "bat_3" }, opts: { priority: 5 } },
  ]);
  await queues["deliver-webhook"].add("deliver", { notificationId: "ntf_1" }, { delay: 3_600_000 });
});
afterAll(async () => {
  await Promise.all(Object.values(queues).map((queue) => queue.obliterate({ force: true })));
  await closeQueues(queues);
  redis.disconnect();
});

describe("npm run queues", () => {
  it("prints waiting, active, delayed, failed and completed for every queue under the configured prefix", async () => {
    const { stdout } = await queuesCommand(TEST_REDIS_URL);
    expect(stdout).toContain(`queue prefix ${prefix}`);
    const lines = stdout.split("\n");
    expect(lines.find((line) => line.startsWith("queue "))?.split(/\s+/)).toEqual([
      "queue", "waiting", "active", "delayed", "failed", "completed",
    ]);
    const row = (name: string) => lines.find((line) => line.startsWith(`${name} `))?.trim().split(/\s+/).slice(1);
    // Prioritized jobs count as waiting: they run as soon as a worker is free.
    expect(row("transactions")).toEqual(["3", "0", "0", "0", "0"]);
    expect(row("deliver-webhook")).toEqual(["0", "0", "1", "0", "0"]);
    for (const name of ["risk", "deliver-email", "deliver-sms", "maintenance"]) {
      expect(row(name), name).toEqual(["0", "0", "0", "0", "0"]);
    }
    expect(row("total")).toEqual(["3", "0", "1", "0", "0"]);
  });

  it("marks a paused queue PAUSED and says its jobs wait until it is resumed, and stops once it is resumed", async () => {
    await queues["deliver-webhook"].pause();
    try {
      const { stdout } = await queuesCommand(TEST_REDIS_URL);
      const lines = stdout.split("\n");
      expect(lines.find((line) => line.startsWith("deliver-webhook "))?.trim().split(/\s+/).slice(1)).toEqual([
        "0", "0", "1", "0", "0", "PAUSED",
      ]);
      for (const name of ["transactions", "risk", "deliver-email", "deliver-sms", "maintenance", "total"]) {
        expect(lines.find((line) => line.startsWith(`${name} `)), name).not.toContain("PAUSED");
      }
      expect(stdout).toContain(
        "deliver-webhook is PAUSED (from Bull Board?): no worker takes its jobs until it is resumed (Bull Board, /admin/queues: Resume)",
      );
    } finally {
      await queues["deliver-webhook"].resume();
    }
    const { stdout } = await queuesCommand(TEST_REDIS_URL);
    expect(stdout).not.toContain("PAUSED");
    expect(stdout.trimEnd().split("\n").at(-1)).toMatch(/^total\s/);
  });

  it("needs only REDIS_URL and QUEUE_PREFIX: no database URL or token secret on a monitoring host", async () => {
    const { stdout } = await queuesCommand(TEST_REDIS_URL, { PATH: process.env.PATH ?? "", REDIS_URL: TEST_REDIS_URL, QUEUE_PREFIX: prefix });
    expect(stdout).toContain(`queue prefix ${prefix}`);
    expect(stdout).toMatch(/^transactions\s+3\s/m);
  });

  it("exits non-zero and says so when Redis cannot be reached", async () => {
    const failure = await queuesCommand("redis://127.0.0.1:1").catch((error: { code: number; stderr: string }) => error);
    expect(failure).toMatchObject({ code: 1 });
    expect((failure as { stderr: string }).stderr).toContain("Redis at redis://127.0.0.1:1 cannot be reached (connect ECONNREFUSED 127.0.0.1:1)");
  });

  it("says Redis did not answer within its 5 s bound and exits 1 when Redis accepts the connection but never answers", async () => {
    const silent = await startSilentRedis();
    try {
      const failure = await queuesCommand(silent.url).catch((error: { code: number; stderr: string }) => error);
      // Without a bound of its own it never exits, and execFile's 20 s timeout kills it (code null).
      expect(failure).toMatchObject({ code: 1 });
      expect((failure as { stderr: string }).stderr.trim()).toBe(
        `Redis at ${silent.url} cannot be reached (the server did not answer within 5000 ms)`,
      );
    } finally {
      await silent.close();
    }
  });

  it("says Redis cannot be reached and exits 1 when Redis answers the connection's handshake and then stops answering", async () => {
    const hung = await startSilentRedis({ answerHandshake: true });
    try {
      const failure = await queuesCommand(hung.url).catch((error: { code: number; stderr: string }) => error);
      expect(failure).toMatchObject({ code: 1 });
      expect((failure as { stderr: string }).stderr).toContain(`Redis at ${hung.url} cannot be reached (the server did not answer within 5000 ms)`);
    } finally {
      await hung.close();
    }
  });

  it("exits non-zero and gives Redis's refusal, not \"cannot be reached\", when REDIS_URL's password is wrong or missing", async () => {
    const server = await startPasswordRedis("s3cret-redis-pw");
    try {
      const wrong = await queuesCommand(server.url("wrong-redis-pw")).catch((error: { code: number; stderr: string }) => error);
      expect(wrong).toMatchObject({ code: 1 });
      const { stderr } = wrong as { stderr: string };
      expect(stderr.trim()).toBe(
        `Redis refused the connection: WRONGPASS invalid username-password pair or user is disabled. — check REDIS_URL (redis://:***@127.0.0.1:${server.port})`,
      );
      expect(stderr).not.toContain("wrong-redis-pw");

      const none = await queuesCommand(server.url()).catch((error: { code: number; stderr: string }) => error);
      expect(none).toMatchObject({ code: 1, stderr: expect.stringContaining("Redis refused the connection: NOAUTH Authentication required.") });
    } finally {
      await server.stop();
    }
  });
});
