// A test notification counts its quota in Redis under its alert's row lock. A Redis that stops
// answering raises no error: the request waited for ever, holding the lock and a database
// connection (ten such requests held the whole pool, and the API answered nothing else).
// Now the count is bounded: 503 with Retry-After, the lock let go, nothing stored.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { seedAlert } from "../helpers/delivery.ts";
import { TEST_REDIS_URL } from "../helpers/env.ts";
import { endpointOf, startTcpProxy, throughProxy, type TcpProxy } from "../helpers/tcp-proxy.ts";

let redisProxy: TcpProxy;
let t: TestApp;

beforeAll(async () => {
  redisProxy = await startTcpProxy(endpointOf(TEST_REDIS_URL, 6379));
  t = await startTestApp("test-quota-hung-redis", { REDIS_URL: throughProxy(TEST_REDIS_URL, redisProxy) });
});
afterAll(async () => {
  // Answers flow again, so the app's own clean-up can reach Redis.
  await redisProxy.cut();
  await redisProxy.restore();
  await t.close();
  await redisProxy.close();
});

describe("a test notification while Redis does not answer", () => {
  it("is a 503 with Retry-After, stores nothing, and leaves the alert free for a delete", async () => {
    const alert = await seedAlert(t, { method: "webhook", webhookUrl: "http://127.0.0.1:9/hook" });
    const token = await t.token(alert.owner);
    redisProxy.stall();

    const res = await t.app.inject({ method: "POST", url: `/v1/risk/alerts/${alert.alertId}/test`, headers: { authorization: `Bearer ${token}` } });
    expect(res.statusCode).toBe(503);
    expect(res.headers["retry-after"]).toBe("5");
    expect(res.json()).toMatchObject({ code: "unavailable" });
    const [stored] = await t.deps.sql<{ n: number }[]>`select count(*)::int as n from notifications where alert_id = ${alert.alertId}`;
    expect(stored!.n).toBe(0);

    const deleted = await t.app.inject({ method: "DELETE", url: `/v1/risk/alerts/${alert.alertId}`, headers: { authorization: `Bearer ${token}` } });
    expect(deleted.statusCode).toBe(204);
  }, 20_000);
});
