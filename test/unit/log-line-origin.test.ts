// Every log line says which process wrote it: the command (api, worker, …), its pid and its
// host, beside the service. pino's own pid and hostname were dropped by our `base`, so a
// `job failed` from one of several workers could not be traced to its process or host.
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { createLogger } from "../../src/logger.ts";

const LOGGER = fileURLToPath(new URL("../../src/logger.ts", import.meta.url));
const ROOT = fileURLToPath(new URL("../..", import.meta.url));

describe("the origin of a log line", () => {
  it("carries the service, the process's role, its pid and its host, and nothing of the environment", () => {
    const lines: string[] = [];
    const sink = new Writable({ write: (chunk: Buffer, _e, done) => (lines.push(chunk.toString()), done()) });
    createLogger("info", sink, { role: "worker" }).warn({ queue: "deliver-webhook", jobId: "ntf_1" }, "job failed");
    const line = JSON.parse(lines[0]!) as Record<string, unknown>;
    expect(line).toMatchObject({ service: "wallet-alerts", role: "worker", pid: process.pid, hostname: hostname(), msg: "job failed" });
    expect(Object.keys(line).sort()).toEqual(["hostname", "jobId", "level", "msg", "pid", "queue", "role", "service", "time"]);
  });

  it("names the role after the command the process runs (src/bin/worker.ts: worker)", async () => {
    const dir = await mkdtemp(join(tmpdir(), "wa-log-origin-"));
    try {
      const script = join(dir, "worker.ts");
      await writeFile(script, `import { createLogger } from ${JSON.stringify(LOGGER)};\ncreateLogger("info").info("started");\n`);
      const { stdout } = await promisify(execFile)(process.execPath, ["--import", "tsx", script], { cwd: ROOT });
      const line = JSON.parse(stdout.trim().split("\n")[0]!) as Record<string, unknown>;
      expect(line).toMatchObject({ role: "worker", hostname: hostname(), msg: "started" });
      expect(line.pid).toEqual(expect.any(Number));
      expect(line.pid).not.toBe(process.pid);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
