// The line a service stops with when a setting is refused is a log line like its others (JSON:
// level, time, role, msg): a plain one on stderr was missed by JSON log pipelines and by alerts
// on level >= 50, exactly for the processes in a crash loop.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { exitWithin, spawnApi, spawnWorker } from "../helpers/pipeline.ts";
import { freePort } from "../helpers/ports.ts";

/** Start-up (tsx, on two shared cores); the refusal itself is at once. */
const EXIT_BOUND_MS = 30_000;

let t: TestApp;

beforeAll(async () => {
  t = await startTestApp("startup-refusal-lines");
});
afterAll(async () => {
  await t?.close();
});

type LogLine = { level: number; time: string; role: string; msg: string; setting?: string };

/** Every line the process wrote, each of which must be a JSON log line. */
function logLines(output: string): LogLine[] {
  const lines = output.split("\n").filter((line) => line.trim() !== "");
  for (const line of lines) expect(() => JSON.parse(line), `not a log line: ${line}`).not.toThrow();
  return lines.map((line) => JSON.parse(line) as LogLine);
}

describe("a service refusing its settings at start", () => {
  it("has the API say an invalid setting in one fatal log line", async () => {
    const api = spawnApi(t, { PORT: String(await freePort()), HOST: "127.0.0.1", LOG_LEVEL: "INFO" });
    expect(await exitWithin(api, EXIT_BOUND_MS), api.output()).toEqual({ code: 1, signal: null });
    expect(logLines(api.output())).toEqual([
      expect.objectContaining({
        level: 60,
        time: expect.any(String),
        role: "api",
        msg: "invalid configuration: LOG_LEVEL: expected one of fatal, error, warn, info, debug, trace, silent",
      }),
    ]);
  }, EXIT_BOUND_MS + 10_000);

  it("has a worker say an unknown queue in WORKER_QUEUES in one fatal log line naming the setting", async () => {
    const worker = spawnWorker(t, { WORKER_QUEUES: "transaction" });
    expect(await exitWithin(worker, EXIT_BOUND_MS), worker.output()).toEqual({ code: 1, signal: null });
    expect(logLines(worker.output())).toEqual([
      expect.objectContaining({ level: 60, role: "worker", setting: "WORKER_QUEUES", msg: expect.stringMatching(/^WORKER_QUEUES: unknown queue transaction; the queues are /) }),
    ]);
  }, EXIT_BOUND_MS + 10_000);
});
