// `npm run start:worker`, as README's command table gives it, stopped with SIGTERM to npm (what
// a process manager or `docker stop` of a `CMD npm …` sends). npm passes the signal on to the
// shell it ran the script in; until the script `exec`ed node, that shell died without passing it
// on, and the worker, orphaned, kept taking jobs with no graceful stop.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, testEnv, type TestApp } from "../helpers/app.ts";
import { exited } from "../helpers/pipeline.ts";
import { waitFor } from "../helpers/wait.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
let t: TestApp;

beforeAll(async () => {
  t = await startTestApp("npm-start-signal");
});
afterAll(async () => {
  await t?.close();
});

/** Whether a process of that pid is still there. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe("npm run start:worker", () => {
  it("stops the worker itself, gracefully, when npm is sent SIGTERM", async () => {
    let output = "";
    const npm = spawn("npm", ["run", "--silent", "start:worker"], {
      cwd: ROOT,
      env: { ...process.env, ...testEnv({ DATABASE_URL: t.config.databaseUrl, QUEUE_PREFIX: t.config.queuePrefix, LOG_LEVEL: "info" }) },
      stdio: ["ignore", "pipe", "pipe"],
    });
    npm.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    npm.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    const started = await waitFor("the worker's start line", async () => {
      const line = output.split("\n").find((text) => text.includes('"worker started"'));
      return line ? (JSON.parse(line) as { pid: number }) : undefined;
    }, 30_000);
    // The worker is npm's own child: the shell gave its place to node.
    expect(started.pid).not.toBe(npm.pid);

    npm.kill("SIGTERM");
    await exited(npm);
    try {
      await waitFor("the worker to exit", async () => !alive(started.pid), 20_000);
    } finally {
      // An orphaned worker would keep taking jobs after the test.
      if (alive(started.pid)) process.kill(started.pid, "SIGKILL");
    }
    // It stopped through its own shutdown, not a kill: it said so.
    expect(output).toContain("SIGTERM: stopping gracefully");
  }, 60_000);
});
