// PostgreSQL goes away under a worker with deliveries queued: every job fails and is retried,
// and the log an operator reads says so once per kind of error, not once per job (README,
// Monitoring).
import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.ts";
import { createDeps, type Deps } from "../../src/deps.ts";
import { createLogger } from "../../src/logger.ts";
import { createChannels, type Channels } from "../../src/notify/channels/index.ts";
import { enqueueDeliveries } from "../../src/queue/deliveries.ts";
import { QUEUES } from "../../src/queue/names.ts";
import { runWorkers, type RunningWorkers } from "../../src/queue/run-workers.ts";
import { startTestApp, testEnv, type TestApp } from "../helpers/app.ts";
import { waitFor } from "../helpers/pipeline.ts";
import { endpointOf, startTcpProxy, throughProxy, type TcpProxy } from "../helpers/tcp-proxy.ts";

let t: TestApp;
let proxy: TcpProxy;
let deps: Deps;
let channels: Channels;
let running: RunningWorkers;
const logLines: string[] = [];
let failures = 0;

beforeAll(async () => {
  t = await startTestApp("job-failure-log");
  proxy = await startTcpProxy(endpointOf(t.config.databaseUrl, 5432));
  const config = loadConfig(
    testEnv({ DATABASE_URL: throughProxy(t.config.databaseUrl, proxy), QUEUE_PREFIX: t.config.queuePrefix }),
  );
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logLines.push(chunk.toString());
      done();
    },
  });
  deps = createDeps(config, { logger: createLogger("info", sink) });
  channels = createChannels(config, deps.logger);
  running = runWorkers({ ...deps, channels }, { queues: [QUEUES.deliverWebhook] });
  for (const worker of running.workers) worker.on("failed", () => failures++);
});
afterAll(async () => {
  await running?.close();
  await channels?.close();
  await deps?.close();
  await proxy?.close();
  await t?.close();
});

const jobFailedLines = (from: number) => logLines.slice(from).filter((line) => line.includes('"msg":"job failed'));

describe("job failures while PostgreSQL is away", () => {
  it("logs forty deliveries failing on an unreachable PostgreSQL once, not forty times", async () => {
    const from = logLines.length;
    await proxy.cut();
    try {
      const items = Array.from({ length: 40 }, (_, i) => ({ notificationId: `ntf_outage${i}`, channel: "webhook" as const }));
      await enqueueDeliveries(t.deps.queues, items);
      await waitFor("every delivery to fail once", async () => failures >= 40, 30_000);
      const lines = jobFailedLines(from);
      expect(lines.length).toBeGreaterThan(0);
      // One per kind of error (a refused connection; at most a dropped one besides).
      expect(lines.length, lines.join("")).toBeLessThanOrEqual(2);
      expect(lines[0]).toContain('"queue":"deliver-webhook"');
      // BullMQ's runs of the job, named so: a delivery's attempts are its notification's.
      expect(lines[0]).toMatch(/"jobRuns":\d/);
      expect(lines[0]).not.toContain('"attempts"');
    } finally {
      await proxy.restore();
    }
  }, 60_000);
});
