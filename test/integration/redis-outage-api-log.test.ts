// Redis goes away under the API: every /v1 request is answered 503 by the rate limiter, before
// any route runs (nothing is stored: the client sends again). The operator's log must say so
// (README, Monitoring: `dependency unavailable`, at warn once a minute): in an operator's review
// 31 ingests were answered 503 and the API logged nothing but request lines.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mintToken } from "../../src/http/mint-token.ts";
import { runReconcileOnce } from "../../src/pipeline/reconcile.ts";
import { QUEUES } from "../../src/queue/names.ts";
import { closeQueues, createQueues } from "../../src/queue/producers.ts";
import { createCommandRedis } from "../../src/redis.ts";
import { TEST_JWT_SECRET, TEST_REDIS_URL } from "../helpers/env.ts";
import { startLoggedApp, type LoggedApp } from "../helpers/logged-app.ts";
import { randomAddress, randomSignature } from "../helpers/chain.ts";
import { endpointOf, startTcpProxy, throughProxy, type TcpProxy } from "../helpers/tcp-proxy.ts";
import { waitFor } from "../helpers/wait.ts";

let proxy: TcpProxy;
let logged: LoggedApp;
let token: string;
const HELIUS_SECRET = "redis-outage-api-log-helius-0123456789";

beforeAll(async () => {
  proxy = await startTcpProxy(endpointOf(TEST_REDIS_URL, 6379));
  logged = await startLoggedApp("redis-outage-api-log", { REDIS_URL: throughProxy(TEST_REDIS_URL, proxy), HELIUS_AUTH_HEADER: HELIUS_SECRET }, "info");
  await logged.app.ready();
  token = await mintToken(TEST_JWT_SECRET, { sub: "ingestor", scope: "ingest:write", ttlSeconds: 600 }, logged.deps.config.jwt);
}, 30_000);
afterAll(async () => {
  await logged?.close();
  await proxy?.close();
});

type LogLine = { level: number; msg: string; requestId?: string; setting?: string; err?: { message?: string; code?: string } };
const linesFrom = (from: number): LogLine[] => logged.lines.slice(from).map((line) => JSON.parse(line) as LogLine);

const ingest = () =>
  logged.app.inject({
    method: "POST",
    url: "/v1/ingest/transactions",
    headers: { authorization: `Bearer ${token}` },
    payload: {
      transactions: [
        { signature: randomSignature(), type: "transfer", amount: 1, token: "SOL", from: randomAddress(), to: randomAddress(), blockTime: 1_718_000_000, slot: 1, fee: 0.000005, status: "success" },
      ],
    },
  });

describe("the API while Redis cannot be reached", () => {
  it("warns `dependency unavailable` once for twenty ingests answered 503, naming REDIS_URL and Redis's error", async () => {
    const from = logged.lines.length;
    await proxy.cut();
    try {
      await waitFor("the API's Redis connection to drop", async () => logged.deps.redis.status !== "ready", 10_000);
      const answers = [];
      for (let i = 0; i < 20; i++) answers.push(await ingest());
      for (const res of answers) {
        expect(res.statusCode, res.body).toBe(503);
        expect(res.headers["retry-after"]).toBe("5");
      }
    } finally {
      await proxy.restore();
    }
    await waitFor("the API's Redis connection to return", async () => logged.deps.redis.status === "ready", 20_000);
    const lines = linesFrom(from);
    const warnings = lines.filter((line) => line.level === 40 && line.msg === "dependency unavailable");
    // Once per kind of error (the dropped connection, the refused reconnects), not once per request.
    expect(warnings.length, JSON.stringify(lines)).toBeGreaterThanOrEqual(1);
    expect(warnings.length, JSON.stringify(warnings)).toBeLessThanOrEqual(2);
    expect(warnings[0]!.setting).toBe("REDIS_URL");
    expect(warnings[0]!.requestId).toEqual(expect.any(String));
    // Which error comes first depends on where the cut finds the connection: a refused
    // reconnect, a reset, a command on a closed client, or a write into the dropped socket
    // (EPIPE: a CI run of 2026-11-28 logged that first).
    expect(JSON.stringify(warnings[0]!.err)).toMatch(/ECONNREFUSED|ECONNRESET|EPIPE|Connection is closed|not connected/);
    // Nothing was stored: the rate limiter answered before the route.
    const [row] = await logged.deps.sql<{ n: number }[]>`select count(*)::int as n from ingest_batches`;
    expect(row?.n).toBe(0);
  }, 60_000);

  // README, Reliability: the Helius route has no token, so no rate limit: its delivery is
  // stored before the enqueue fails, and the reconciler enqueues it once Redis is back.
  it("stores a Helius delivery that arrives while Redis cannot be reached, answers 503, and leaves it to the reconciler", async () => {
    const signature = randomSignature();
    const item = {
      signature, slot: 280_000_000, timestamp: 1_720_000_000, fee: 5000, feePayer: randomAddress(), type: "TRANSFER",
      nativeTransfers: [{ fromUserAccount: randomAddress(), toUserAccount: randomAddress(), amount: 1_500_000_000 }],
    };
    await proxy.cut();
    let res;
    try {
      await waitFor("the API's Redis connection to drop", async () => logged.deps.redis.status !== "ready", 10_000);
      res = await logged.app.inject({ method: "POST", url: "/v1/ingest/helius", headers: { authorization: HELIUS_SECRET }, payload: [item] });
    } finally {
      await proxy.restore();
    }
    expect(res.statusCode, res.body).toBe(503);
    const [row] = await logged.deps.sql<{ batchId: string }[]>`select batch_id as "batchId" from transactions where signature = ${signature}`;
    expect(row?.batchId).toEqual(expect.any(String));
    await waitFor("the API's Redis connection to return", async () => logged.deps.redis.status === "ready", 20_000);
    // The reconciler runs in the workers (README, Reliability), whose connections did not go
    // through this API's outage: a sweep on connections of its own, straight to Redis. Run on
    // the API's queues it waited for their reconnects, which back off up to 20 s each, and a
    // loaded machine passed 45 s (two full runs, 2026-11-27 and 2026-11-28).
    const workerRedis = createCommandRedis(TEST_REDIS_URL);
    const workerQueues = createQueues(workerRedis, logged.deps.config.queuePrefix);
    try {
      await waitFor("the worker's Redis connection", async () => workerRedis.status === "ready", 10_000);
      await runReconcileOnce({ ...logged.deps, redis: workerRedis, queues: workerQueues, now: () => new Date(Date.now() + 10_000) }, { graceMs: 0 });
      expect(await workerQueues[QUEUES.transactions].getJobState(row!.batchId)).toBe("waiting");
    } finally {
      await closeQueues(workerQueues);
      workerRedis.disconnect();
    }
  }, 60_000);
});
