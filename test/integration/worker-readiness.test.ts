// The worker's /readyz (beside its /metrics, without credentials): what an orchestrator's health
// check asks. A worker whose Redis has stopped answering is not ready, however well its
// metrics server still answers.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { TEST_REDIS_URL } from "../helpers/env.ts";
import { exited, spawnWorker, waitFor } from "../helpers/pipeline.ts";
import { freePort } from "../helpers/ports.ts";
import { endpointOf, startTcpProxy, throughProxy, type TcpProxy } from "../helpers/tcp-proxy.ts";

let t: TestApp;
let redisProxy: TcpProxy;

beforeAll(async () => {
  t = await startTestApp("worker-readiness");
  redisProxy = await startTcpProxy(endpointOf(TEST_REDIS_URL, 6379));
});
afterAll(async () => {
  await redisProxy.close();
  await t.close();
});

describe("the worker's /readyz", () => {
  it("answers 200 while PostgreSQL and Redis answer, and 503 problem+json naming Redis once Redis stops answering", async () => {
    const port = await freePort();
    const worker = spawnWorker(t, {
      REDIS_URL: throughProxy(TEST_REDIS_URL, redisProxy),
      WORKER_METRICS_PORT: String(port),
      HOST: "127.0.0.1",
      // The metrics server (and with it /readyz) runs behind admin credentials for /metrics.
      ADMIN_USER: "ops",
      ADMIN_PASSWORD: "correct-horse-battery",
    });
    const readyz = () => fetch(`http://127.0.0.1:${port}/readyz`).catch(() => null);
    try {
      const ready = await waitFor("the worker to be ready", async () => {
        const response = await readyz();
        return response?.status === 200 ? response : null;
      });
      expect(await ready.json()).toEqual({ status: "ready", postgres: "up", redis: "up" });

      redisProxy.stall();
      const down = await waitFor("the worker to say Redis is down", async () => {
        const response = await readyz();
        return response?.status === 503 ? response : null;
      });
      expect(down.headers.get("content-type")).toBe("application/problem+json");
      expect(down.headers.get("retry-after")).toBe("5");
      expect(await down.json()).toMatchObject({ status: 503, code: "unavailable", detail: "Redis cannot be reached" });
      // Its metrics server answers all the while: that is why a health check must not ask it.
      expect((await fetch(`http://127.0.0.1:${port}/metrics`)).status).toBe(401);
    } finally {
      worker.kill("SIGKILL");
      await exited(worker);
    }
  }, 30_000);
});
