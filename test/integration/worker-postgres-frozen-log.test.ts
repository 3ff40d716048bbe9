// PostgreSQL freezes under a worker process (connections stay open, no answer comes: a frozen
// primary, a network partition). Nothing raises an error: the worker's jobs only wait, and in an
// operator's review its log said nothing for the 70 s it lasted, while /readyz and the lag metric
// told the truth. The worker checks its own readiness every 10 s and says so at warn (once a
// minute while it lasts), and at info when PostgreSQL answers again.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { exited, spawnWorker, waitFor } from "../helpers/pipeline.ts";
import { endpointOf, startTcpProxy, throughProxy, type TcpProxy } from "../helpers/tcp-proxy.ts";

let t: TestApp;
let proxy: TcpProxy;

beforeAll(async () => {
  t = await startTestApp("worker-postgres-frozen-log");
  proxy = await startTcpProxy(endpointOf(t.config.databaseUrl, 5432));
});
afterAll(async () => {
  await proxy?.close();
  await t?.close();
});

type LogLine = { level: number; msg: string; timeoutMs?: number };
const logLines = (output: string): LogLine[] =>
  output.split("\n").filter((line) => line.startsWith("{")).map((line) => JSON.parse(line) as LogLine);

describe("a worker whose PostgreSQL stops answering", () => {
  it("warns once that PostgreSQL does not answer, without /readyz being asked, and says when it answers again", async () => {
    const worker = spawnWorker(t, { LOG_LEVEL: "info", DATABASE_URL: throughProxy(t.config.databaseUrl, proxy), WORKER_QUEUES: "transactions" });
    try {
      await waitFor("the worker to start", async () => worker.output().includes('"msg":"worker started"'), 30_000);
      proxy.stall();
      const silent = (line: LogLine) => line.msg.startsWith("readiness: PostgreSQL did not answer");
      await waitFor("the worker to warn that PostgreSQL does not answer", async () => logLines(worker.output()).some(silent), 30_000);
      // Another probe or two meanwhile: still the one line (the next comes a minute later).
      await new Promise((resolve) => setTimeout(resolve, 12_000));
      const warned = logLines(worker.output()).filter(silent);
      expect(warned, worker.output()).toHaveLength(1);
      expect(warned[0]).toMatchObject({ level: 40, timeoutMs: 2000 });

      // Back: the stalled answers are lost, so the connections that waited for them are dropped and made anew.
      await proxy.cut();
      await proxy.restore();
      await waitFor(
        "the worker to say PostgreSQL answers again",
        async () => logLines(worker.output()).some((line) => line.level === 30 && line.msg === "readiness: PostgreSQL answers again"),
        30_000,
      );
    } finally {
      await proxy.restore().catch(() => {});
      worker.kill("SIGTERM");
      const { code } = await exited(worker);
      expect(code, worker.output()).toBe(0);
    }
  }, 120_000);
});
