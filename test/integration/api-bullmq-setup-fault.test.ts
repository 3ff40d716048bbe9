// The API's producers (BullMQ Queues) set their Redis connection up once, reading the server's
// version from the INFO answer as text. When that fails (an answer that is not text: BullMQ's
// "doc.split is not a function"; or a Redis older than BullMQ accepts), BullMQ never checks
// again: every enqueue failed (500, one error line each) until a restart, while /readyz said
// ready and nothing at info level said why. The API now does what a worker does
// (redis-unreadable-info.test.ts): one fatal line that says what happened, and exit 1, for its
// supervisor to start a fresh process. Against a real Redis it serves, enqueues and stops on
// SIGTERM with 0, as before, also when the stop comes while BullMQ still waits for INFO.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { exited, exitWithin, spawnApi, waitFor } from "../helpers/pipeline.ts";
import { freePort } from "../helpers/ports.ts";
import { bearer, makeTransaction } from "../helpers/seed.ts";
import { bulkInfo, integerInfoAnswer, jsonLogLines, plainAnswer, startScriptedRedis, type ScriptedRedis } from "../helpers/scripted-redis.ts";

/** Start-up (tsx) plus the preflight; the check fails as soon as the producers' connection is ready. */
const EXIT_BOUND_MS = 20_000;

let t: TestApp;
let redis: ScriptedRedis;

beforeAll(async () => {
  t = await startTestApp("api-bullmq-setup-fault");
  redis = await startScriptedRedis(integerInfoAnswer);
});
afterAll(async () => {
  await redis?.close();
  await t?.close();
});

type LogLine = { level: number; msg: string; queue?: string; cause?: string };

const logLines = (output: string): LogLine[] => jsonLogLines<LogLine>(output);

type Api = ReturnType<typeof spawnApi>;

async function startApi(env: Record<string, string>): Promise<{ api: Api; base: string }> {
  const port = await freePort();
  const api = spawnApi(t, { PORT: String(port), HOST: "127.0.0.1", LOG_LEVEL: "info", ...env });
  return { api, base: `http://127.0.0.1:${port}` };
}

/** The API's exit (or "still running" after the bound) and its log lines; it is killed either way. */
async function runApi(url: string): Promise<{ outcome: unknown; lines: LogLine[]; output: string }> {
  const { api } = await startApi({ REDIS_URL: url });
  try {
    const outcome = await exitWithin(api, EXIT_BOUND_MS);
    return { outcome, lines: logLines(api.output()), output: api.output() };
  } finally {
    api.kill("SIGKILL");
    await exited(api);
  }
}

/** SIGTERM, and the exit it leads to (SIGKILL past the bound: the test then fails on the code). */
async function stop(api: Api): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  api.kill("SIGTERM");
  const bound = setTimeout(() => api.kill("SIGKILL"), EXIT_BOUND_MS);
  try {
    return await exited(api);
  } finally {
    clearTimeout(bound);
  }
}

describe("an API whose producers' Redis connection BullMQ could not set up (its INFO check failed)", () => {
  it("exits 1 with one fatal line saying INFO's answer was not text, instead of failing every enqueue until a restart", async () => {
    const { outcome, lines, output } = await runApi(redis.url);
    expect(outcome, output).toEqual({ code: 1, signal: null });
    expect(lines.filter((line) => line.level === 60)).toEqual([
      expect.objectContaining({
        cause: "doc.split is not a function",
        queue: expect.any(String),
        msg: expect.stringMatching(
          /^api: Redis answered the connection's version check \(INFO\) with something other than text: .*; BullMQ does not set a connection up again, so this process cannot recover: exiting \(every request that enqueues a job would fail until it is restarted\)$/,
        ),
      }),
    ]);
    // BullMQ's words appear only as the fatal line's cause, not in a line of their own.
    expect(lines.filter((line) => line.level < 60 && JSON.stringify(line).includes("doc.split")), output).toEqual([]);
    expect(redis.commands().some(([name]) => name === "INFO")).toBe(true);
  }, 40_000);

  it("exits 1 the same way for any other failure of that check, here a Redis older than BullMQ accepts", async () => {
    const info = "# Server\r\nredis_version:4.0.0\r\n";
    const old = await startScriptedRedis((command) => (command[0] === "INFO" ? bulkInfo(info) : plainAnswer(command)));
    try {
      const { outcome, lines, output } = await runApi(old.url);
      expect(outcome, output).toEqual({ code: 1, signal: null });
      expect(lines.filter((line) => line.level === 60)).toEqual([
        expect.objectContaining({
          msg: expect.stringMatching(/^api: BullMQ could not set up its Redis connection \(Redis version needs to be greater or equal than 5\.0\.0\s+Current: 4\.0\.0\); BullMQ does not set a connection up again/),
        }),
      ]);
    } finally {
      await old.close();
    }
  }, 40_000);
});

describe("an API on a real Redis", () => {
  it("is ready, enqueues, stays up, and exits 0 on SIGTERM without a fatal line", async () => {
    const token = await t.token("alice");
    const { api, base } = await startApi({});
    try {
      await waitFor("the API to be ready", async () => (await fetch(`${base}/readyz`).catch(() => null))?.status === 200, 30_000);
      const res = await fetch(`${base}/v1/ingest/transactions`, {
        method: "POST",
        headers: { ...bearer(token), "content-type": "application/json" },
        body: JSON.stringify({ transactions: [makeTransaction()] }),
      });
      expect(res.status, await res.text()).toBe(202);
      // Through the producers' connection: the job is in Redis.
      expect(await t.deps.queues.transactions.getWaitingCount()).toBe(1);
      expect(api.exitCode, api.output()).toBeNull();
      expect(await stop(api), api.output()).toEqual({ code: 0, signal: null });
      expect(logLines(api.output()).filter((line) => line.level >= 50), api.output()).toEqual([]);
    } finally {
      api.kill("SIGKILL");
      await exited(api);
    }
  }, 60_000);
});

describe("a stop while BullMQ sets the producers' connection up", () => {
  it("exits 0 on SIGTERM while BullMQ still waits for its INFO answer: a set-up that the stop cuts short is no fault", async () => {
    // ioredis's ready check (the first INFO) is answered; BullMQ's own INFO, which comes next, never is.
    const info = "# Server\r\nredis_version:7.2.4\r\nloading:0\r\n";
    let infos = 0;
    const slow = await startScriptedRedis((command) => {
      if (command[0] !== "INFO") return plainAnswer(command);
      infos++;
      return infos === 1 ? bulkInfo(info) : "";
    });
    const { api } = await startApi({ REDIS_URL: slow.url });
    try {
      await waitFor("the API to listen with BullMQ's INFO unanswered", async () => api.output().includes("Server listening") && infos > 1, 30_000);
      // The stop closes the connection under BullMQ's INFO, which then fails with "Connection is closed".
      expect(await stop(api), api.output()).toEqual({ code: 0, signal: null });
      expect(logLines(api.output()).filter((line) => line.level === 60), api.output()).toEqual([]);
    } finally {
      api.kill("SIGKILL");
      await exited(api);
      await slow.close();
    }
  }, 60_000);
});
