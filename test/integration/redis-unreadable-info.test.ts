// BullMQ sets each Redis connection up once: it reads the server's version from the INFO answer
// as text. An answer that is not text (a connection whose answers are out of step with its
// commands, or a REDIS_URL that does not lead to a Redis) fails that check with BullMQ's
// "doc.split is not a function", and BullMQ never checks again: the Worker failed every command
// from then on, however well Redis answered later, in a loop that never yields — 100 % CPU, deaf
// to SIGTERM, its log lines never written. A worker now exits 1 with one fatal line that says what
// happened, for its supervisor to start a fresh process.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { exited, exitWithin, spawnWorker } from "../helpers/pipeline.ts";
import { bulkInfo, integerInfoAnswer, jsonLogLines, plainAnswer, startScriptedRedis, type ScriptedRedis } from "../helpers/scripted-redis.ts";

/** Start-up (tsx) plus the preflight; the check fails as soon as the workers connect. */
const EXIT_BOUND_MS = 20_000;

let t: TestApp;
let redis: ScriptedRedis;

beforeAll(async () => {
  t = await startTestApp("redis-unreadable-info");
  redis = await startScriptedRedis(integerInfoAnswer);
});
afterAll(async () => {
  await redis?.close();
  await t?.close();
});

type LogLine = { level: number; msg: string; queue?: string; cause?: string };

const logLines = (output: string): LogLine[] => jsonLogLines<LogLine>(output);

/** The worker's exit (or "still running" after the bound) and its log lines. */
async function runWorker(url: string): Promise<{ outcome: unknown; lines: LogLine[]; output: string }> {
  const worker = spawnWorker(t, { REDIS_URL: url, LOG_LEVEL: "info" });
  try {
    const outcome = await exitWithin(worker, EXIT_BOUND_MS);
    return { outcome, lines: logLines(worker.output()), output: worker.output() };
  } finally {
    worker.kill("SIGKILL");
    await exited(worker);
  }
}

describe("a worker whose Redis connection BullMQ could not set up (its INFO check failed)", () => {
  it("exits 1 with one fatal line saying INFO's answer was not text, instead of spinning on BullMQ's 'doc.split is not a function'", async () => {
    const { outcome, lines, output } = await runWorker(redis.url);
    expect(outcome, output).toEqual({ code: 1, signal: null });
    expect(lines.filter((line) => line.level === 60)).toEqual([
      expect.objectContaining({
        cause: "doc.split is not a function",
        msg: expect.stringMatching(
          /^worker: Redis answered the connection's version check \(INFO\) with something other than text: .*; BullMQ does not set a connection up again, so this process cannot recover: exiting \(jobs in flight run again once their locks expire\)$/,
        ),
      }),
    ]);
    // BullMQ's words appear only as the fatal line's cause, not as a "worker error" of their own.
    expect(lines.filter((line) => line.level < 60 && JSON.stringify(line).includes("doc.split")), output).toEqual([]);
    expect(redis.commands().some(([name]) => name === "INFO")).toBe(true);
  }, 40_000);

  it("exits 1 the same way for any other failure of that check, here a Redis older than BullMQ accepts", async () => {
    const info = "# Server\r\nredis_version:4.0.0\r\n";
    const old = await startScriptedRedis((command) => (command[0] === "INFO" ? bulkInfo(info) : plainAnswer(command)));
    try {
      const { outcome, lines, output } = await runWorker(old.url);
      expect(outcome, output).toEqual({ code: 1, signal: null });
      expect(lines.filter((line) => line.level === 60)).toEqual([
        expect.objectContaining({
          msg: expect.stringMatching(/^worker: BullMQ could not set up its Redis connection \(Redis version needs to be greater or equal than 5\.0\.0\s+Current: 4\.0\.0\); BullMQ does not set a connection up again/),
        }),
      ]);
    } finally {
      await old.close();
    }
  }, 40_000);
});
