// The worker's probe port (WORKER_METRICS_PORT) for a platform that only wants probes: it opens
// without admin credentials, answers /healthz (liveness: the event loop runs) and /readyz
// (PostgreSQL and Redis serve it), and keeps /metrics switched off (404), as the API does
// without ADMIN_USER. It used to refuse to start without them, and had no /healthz: /readyz as a
// liveness probe restarted every worker throughout a Redis outage.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { TEST_REDIS_URL } from "../helpers/env.ts";
import { exited, spawnWorker, waitFor } from "../helpers/pipeline.ts";
import { freePort } from "../helpers/ports.ts";
import { endpointOf, startTcpProxy, throughProxy, type TcpProxy } from "../helpers/tcp-proxy.ts";

let t: TestApp;
let redisProxy: TcpProxy;

beforeAll(async () => {
  t = await startTestApp("worker-probes");
  redisProxy = await startTcpProxy(endpointOf(TEST_REDIS_URL, 6379));
});
afterAll(async () => {
  await redisProxy.close();
  await t.close();
});

describe("the worker's probe port without admin credentials", () => {
  it("answers /healthz 200 also while Redis is down, /readyz by PostgreSQL and Redis, and /metrics 404", async () => {
    const port = await freePort();
    const worker = spawnWorker(t, { REDIS_URL: throughProxy(TEST_REDIS_URL, redisProxy), WORKER_METRICS_PORT: String(port), HOST: "127.0.0.1" });
    const get = (path: string) => fetch(`http://127.0.0.1:${port}${path}`).catch(() => null);
    try {
      await waitFor("the worker to be ready", async () => (await get("/readyz"))?.status === 200, 30_000);
      const health = (await get("/healthz"))!;
      expect(health.status).toBe(200);
      expect(await health.json()).toEqual({ status: "ok" });
      expect((await get("/metrics"))!.status).toBe(404);

      redisProxy.stall();
      await waitFor("the worker to say Redis is down", async () => (await get("/readyz"))?.status === 503);
      // Alive all the same: a liveness probe must not restart it for an outage a restart cannot mend.
      expect((await get("/healthz"))!.status).toBe(200);
    } finally {
      worker.kill("SIGKILL");
      await exited(worker);
    }
  }, 60_000);
});
