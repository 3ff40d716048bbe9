// A worker told to stop while a delivery is in flight waits for the job (README, Shutdown); when
// Redis goes away meanwhile, its connections keep trying to reconnect, those of the queues
// already closed too. Their errors go to
// the JSON log, at most once a minute per kind, not to stderr as ioredis's "[ioredis]
// Unhandled error event: …" several times a second.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { exited, spawnWorker, track, waitFor } from "../helpers/pipeline.ts";
import { bearer } from "../helpers/seed.ts";
import { endpointOf, startTcpProxy, throughProxy, type TcpProxy } from "../helpers/tcp-proxy.ts";
import { startWebhookReceiver, type WebhookReceiver } from "../helpers/webhook-receiver.ts";

let t: TestApp;
let proxy: TcpProxy;
let receiver: WebhookReceiver;

beforeAll(async () => {
  t = await startTestApp("worker-stop-redis-cut");
  proxy = await startTcpProxy(endpointOf(t.config.redisUrl, 6379));
  receiver = await startWebhookReceiver();
});
afterAll(async () => {
  await receiver.close();
  await proxy.close();
  await t.close();
});

describe("a worker stopped with a delivery in flight, then Redis cut off", () => {
  it("writes only JSON lines while it waits, with no unhandled ioredis error", async () => {
    // A receiver that never answers: the delivery runs until its 15 s timeout.
    const route = receiver.route("/hooks/never-answers").respond({ hang: true });
    const token = await t.token("alice");
    const { walletId } = await track(t, token);
    const created = await t.app.inject({
      method: "POST",
      url: "/v1/risk/alerts",
      headers: bearer(token),
      payload: { walletId, condition: "unusual_activity", notificationMethod: "webhook", webhookUrl: route.url },
    });
    const worker = spawnWorker(t, { LOG_LEVEL: "info", REDIS_URL: throughProxy(t.config.redisUrl, proxy) });
    try {
      await waitFor("the worker to start", async () => worker.output().includes('"msg":"worker started"'), 30_000);
      const sent = await t.app.inject({ method: "POST", url: `/v1/risk/alerts/${created.json().alertId}/test`, headers: bearer(token) });
      expect(sent.statusCode, sent.body).toBe(202);
      await waitFor("the delivery to be under way", async () => route.requests.length === 1, 30_000);
      // Stopped first: the workers of the idle queues close at once, while the delivery's waits.
      worker.kill("SIGTERM");
      await waitFor("the worker to begin its stop", async () => worker.output().includes("stopping gracefully"));
      await proxy.cut();
      expect(await exited(worker), worker.output()).toEqual({ code: 0, signal: null });
    } finally {
      worker.kill("SIGKILL");
      await proxy.restore();
    }
    const output = worker.output();
    expect(output).not.toContain("Unhandled error event");
    const lines = output.split("\n").filter((line) => line !== "");
    const notJson = lines.filter((line) => {
      try {
        return typeof JSON.parse(line) !== "object";
      } catch {
        return true;
      }
    });
    expect(notJson).toEqual([]);
    // It did wait for the delivery, and said why it stopped without it.
    expect(output).toContain("workers did not close: Redis is not reachable");
  }, 90_000);
});
