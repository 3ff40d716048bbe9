// POST /v1/risk/alerts/{id}/test commits the test notification before it enqueues its
// delivery. When the enqueue fails after that commit, the notification is owed all the same
// (the reconciler enqueues pending notifications that have no job), so the answer is the 202:
// a 503 invited a retry that sent the recipient a second test.
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildApp, type AppInstance } from "../../src/http/app.ts";
import { runReconcileOnce } from "../../src/pipeline/reconcile.ts";
import { createQueues } from "../../src/queue/producers.ts";
import { QUEUES } from "../../src/queue/names.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { freePort } from "../helpers/ports.ts";
import { bearer, trackWallet } from "../helpers/seed.ts";

let t: TestApp;
let deadRedis: Redis;
/** The same API, whose queues sit on a Redis connection that cannot connect: every enqueue fails. */
let appWithoutQueues: AppInstance;

beforeAll(async () => {
  t = await startTestApp("test-notification-enqueue");
  deadRedis = new Redis(`redis://127.0.0.1:${await freePort()}`, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  deadRedis.on("error", () => {});
  const queues = createQueues(deadRedis, t.config.queuePrefix);
  for (const queue of Object.values(queues)) queue.on("error", () => {});
  appWithoutQueues = await buildApp({ ...t.deps, queues });
  await appWithoutQueues.ready();
});
afterAll(async () => {
  await appWithoutQueues?.close();
  deadRedis?.disconnect();
  await t?.close();
});

describe("a test notification whose enqueue fails after its commit", () => {
  it("is answered 202 with its id, stays pending, and is enqueued by the next reconciler sweep", async () => {
    const token = await t.token("alice");
    const wallet = await trackWallet(t, token, { alias: "Hot wallet" });
    const created = await t.app.inject({
      method: "POST",
      url: "/v1/risk/alerts",
      headers: bearer(token),
      payload: { walletId: wallet.walletId, condition: "large_transfer", threshold: 100, notificationMethod: "email", recipient: "desk@example.com" },
    });
    expect(created.statusCode).toBe(201);
    const { alertId } = created.json<{ alertId: string }>();

    const res = await appWithoutQueues.inject({ method: "POST", url: `/v1/risk/alerts/${alertId}/test`, headers: bearer(token) });
    expect(res.statusCode).toBe(202);
    const { notificationId } = res.json<{ notificationId: string }>();
    const [row] = await t.deps.sql<{ status: string }[]>`select status from notifications where id = ${notificationId}`;
    expect(row?.status).toBe("pending");
    expect(await t.deps.queues[QUEUES.deliverEmail].getJob(notificationId)).toBeUndefined();

    const swept = await runReconcileOnce({ ...t.deps, now: () => new Date(Date.now() + 1_000) }, { graceMs: 0 });
    expect(swept.notifications).toBe(1);
    expect((await t.deps.queues[QUEUES.deliverEmail].getJob(notificationId))?.id).toBe(notificationId);
  });
});
