// Runs `npm run demo` as a real process that is expected to refuse and exit: the demo's own
// settings and the service's (decoys a demo must never read) name the same database, port and
// queue prefix, so whichever it read, it meets what the test set up.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { TEST_REDIS_URL } from "./env.ts";
import { exitWithin } from "./pipeline.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

export type DemoSettings = { databaseUrl: string; port: string; queuePrefix: string };

/** The demo's exit (or "still running" after `boundMs`, when it is killed) and what it printed. */
export async function runDemoToExit(settings: DemoSettings, boundMs: number) {
  const demo = spawn(process.execPath, ["--import", "tsx", "src/bin/demo.ts"], {
    cwd: ROOT,
    env: {
      ...process.env,
      DEMO_DATABASE_URL: settings.databaseUrl,
      DEMO_REDIS_URL: TEST_REDIS_URL,
      DEMO_PORT: settings.port,
      DEMO_QUEUE_PREFIX: settings.queuePrefix,
      DATABASE_URL: settings.databaseUrl,
      REDIS_URL: TEST_REDIS_URL,
      PORT: settings.port,
      QUEUE_PREFIX: settings.queuePrefix,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  demo.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  demo.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const exit = await exitWithin(demo, boundMs);
  return { exit, stdout, stderr };
}
