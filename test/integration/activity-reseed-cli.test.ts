// Noticing lost activity counters, and the operator's command, as processes: the workers'
// check (its one warning per loss, its gauge, the token it writes at a deployment's first check), an
// evaluation worker process that warns at start, and `npm run reseed-activity`'s exit codes
// and lines.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { reseedActivity } from "../../src/pipeline/activity-reseed.ts";
import { countersCompleteKey } from "../../src/pipeline/activity-reseed-watch.ts";
import { watchedCountersMonitor } from "../helpers/activity-history.ts";
import { startTestApp, testEnv, type TestApp } from "../helpers/app.ts";
import { randomAddress } from "../helpers/chain.ts";
import { exited, settled, spawnWorker, startWorkers, track, tx, waitFor } from "../helpers/pipeline.ts";
import { ingestTransactions } from "../helpers/seed.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
let t: TestApp;
let token: string;

beforeAll(async () => {
  t = await startTestApp("activity-reseed-cli");
  token = await t.token("desk");
});
afterAll(async () => {
  await t.close();
});

/** A tracked wallet's few sends, evaluated by real workers, which are stopped again. */
async function evaluatedHistory(): Promise<void> {
  const wallet = await track(t, token);
  const now = Math.floor(Date.now() / 1000);
  const workers = startWorkers(t);
  try {
    await ingestTransactions(t, token, [1, 2, 3].map((k) => tx({ from: wallet.address, to: randomAddress(), blockTime: now - k * 600 })));
    await settled(t);
  } finally {
    await workers.close();
  }
}

/** npm run reseed-activity on the test app's database and queue prefix. */
async function runReseed(): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ["--import", "tsx", "src/bin/reseed-activity.ts"], {
    cwd: ROOT,
    env: { ...process.env, ...testEnv({ DATABASE_URL: t.config.databaseUrl, QUEUE_PREFIX: t.config.queuePrefix }) },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const { code } = await exited(child);
  return { code, stdout, stderr };
}

describe("noticing that Redis lost the activity counters", () => {
  it("marks a new deployment's counters complete, warns once per loss with the command to run, and clears after the reseed", async () => {
    const { monitor, warnings, gauge } = watchedCountersMonitor(t);

    // No token recorded yet: one is written to both, and nothing is lost.
    expect(await monitor.check()).toBe("fresh");
    expect(await t.deps.redis.get(countersCompleteKey(t.config.queuePrefix))).toContain("first check");
    await evaluatedHistory();
    expect(await monitor.check()).toBe("complete");
    expect(await gauge()).toBe(0);

    // The mark gone with the counters (a flushed Redis), while Postgres holds its token.
    await t.deps.redis.del(countersCompleteKey(t.config.queuePrefix));
    expect(await monitor.check()).toBe("missing");
    expect(await monitor.check()).toBe("missing");
    expect(await monitor.check()).toBe("missing");
    expect(warnings()).toHaveLength(1);
    expect(JSON.parse(warnings()[0]!)).toMatchObject({ level: 40, command: "npm run reseed-activity" });
    expect(await gauge()).toBe(1);

    await reseedActivity(t.deps);
    expect(await monitor.check()).toBe("complete");
    expect(await gauge()).toBe(0);
    // A second loss is a second detection.
    await t.deps.redis.del(countersCompleteKey(t.config.queuePrefix));
    expect(await monitor.check()).toBe("missing");
    expect(warnings()).toHaveLength(2);
  });

  it("an evaluation worker process warns at start, once, naming the command", async () => {
    await evaluatedHistory();
    await t.deps.redis.del(countersCompleteKey(t.config.queuePrefix));
    const worker = spawnWorker(t, { WORKER_QUEUES: "transactions", LOG_LEVEL: "info" });
    try {
      await waitFor("the worker to start", async () => worker.output().includes("worker started"), 30_000);
    } finally {
      worker.kill("SIGTERM");
      await exited(worker);
    }
    const warnings = worker.output().split("\n").filter((line) => line.includes("npm run reseed-activity"));
    expect(warnings).toHaveLength(1);
    expect(JSON.parse(warnings[0]!)).toMatchObject({ level: 40, msg: expect.stringContaining("Redis no longer holds them") });
  });
});

describe("npm run reseed-activity", () => {
  it("exits 1 with one line while an evaluation worker runs, and 0 with a summary once the workers are stopped", async () => {
    await evaluatedHistory();
    const workers = startWorkers(t, ["transactions"]);
    let refused;
    try {
      await workers.workers[0]!.waitUntilReady();
      refused = await runReseed();
    } finally {
      await workers.close();
    }
    expect(refused.code).toBe(1);
    expect(refused.stderr.trim().split("\n")).toEqual([expect.stringMatching(/^reseed-activity failed: an evaluation worker .*stop the workers/)]);

    await t.deps.redis.del(countersCompleteKey(t.config.queuePrefix));
    const done = await runReseed();
    expect(done.stderr).toBe("");
    expect(done.code).toBe(0);
    expect(done.stdout).toMatch(/replayed \d+ batches, \d+ transactions/);
    expect(done.stdout).toMatch(/done: \d+ tracked addresses .* \d+ batches and \d+ transactions replayed/);
    expect(await t.deps.redis.get(countersCompleteKey(t.config.queuePrefix))).toContain("reseeded");
  });
});
