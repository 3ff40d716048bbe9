import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { loadConfig } from "../../src/config.ts";
import { createDeps, type Deps } from "../../src/deps.ts";
import { buildApp, type AppInstance } from "../../src/http/app.ts";
import { mintToken } from "../../src/http/mint-token.ts";
import { createLogger } from "../../src/logger.ts";
import { whenReady } from "../../src/redis.ts";
import { testEnv } from "../helpers/app.ts";
import { createTestDatabase, uniqueQueuePrefix } from "../helpers/db.ts";
import { randomAddress, randomSignature } from "../helpers/chain.ts";
import { deletePrefixKeysAt } from "../helpers/redis-keys.ts";
import { TEST_JWT_SECRET, TEST_REDIS_URL } from "../helpers/env.ts";
import { endpointOf, startTcpProxy, throughProxy, type TcpProxy } from "../helpers/tcp-proxy.ts";

// The app reaches PostgreSQL and Redis through proxies that the tests cut and restore.
let database: Awaited<ReturnType<typeof createTestDatabase>>;
let pgProxy: TcpProxy;
let redisProxy: TcpProxy;
let deps: Deps;
let app: AppInstance;
let token: string;
let ingestToken: string;
const prefix = uniqueQueuePrefix("readiness");
const logLines: string[] = [];
const ADMIN_AUTH = `Basic ${Buffer.from("ops:correct-horse-battery").toString("base64")}`;

beforeAll(async () => {
  database = await createTestDatabase("readiness");
  pgProxy = await startTcpProxy(endpointOf(database.url, 5432));
  redisProxy = await startTcpProxy(endpointOf(TEST_REDIS_URL, 6379));
  const config = loadConfig(
    testEnv({
      DATABASE_URL: throughProxy(database.url, pgProxy),
      REDIS_URL: throughProxy(TEST_REDIS_URL, redisProxy),
      QUEUE_PREFIX: prefix,
      ADMIN_USER: "ops",
      ADMIN_PASSWORD: "correct-horse-battery",
      // Short: a request that waits on a pool backing off (up to 20 s) gets the deadline's own
      // 503 within seconds, which the outage tests below tell apart from a dependency's.
      REQUEST_TIMEOUT: "3s",
    }),
  );
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logLines.push(chunk.toString());
      done();
    },
  });
  deps = createDeps(config, { dbPoolSize: 2, logger: createLogger("info", sink) });
  if (!(await whenReady(deps.redis, 5_000))) throw new Error("Redis is needed by the tests");
  app = await buildApp(deps);
  await app.ready();
  token = await mintToken(TEST_JWT_SECRET, { sub: "alice", scope: "wallets:read", ttlSeconds: 600 }, config.jwt);
  ingestToken = await mintToken(TEST_JWT_SECRET, { sub: "alice", scope: "ingest:write", ttlSeconds: 600 }, config.jwt);
});
afterAll(async () => {
  await app?.close();
  await deps?.close();
  await pgProxy?.close();
  await redisProxy?.close();
  // Directly, not through the proxy that the tests cut.
  await deletePrefixKeysAt(TEST_REDIS_URL, prefix);
  await database?.drop();
});

/** The 503 of a request whose dependency failed (src/http/error-handler.ts), unlike the deadline's "no answer within …". */
const BACKING_SERVICE_UNAVAILABLE = "a backing service is unavailable; retry shortly";
const readyz = () => app.inject({ url: "/readyz" });
const listWallets = () => app.inject({ url: "/v1/wallets", headers: { authorization: `Bearer ${token}` } });
// Polling for a state, not timing it: reconnection happens on the clients' own schedule.
const eventually = (check: () => Promise<void>) => vi.waitFor(check, { timeout: 20_000, interval: 100 });

describe("readiness follows PostgreSQL and Redis", () => {
  it("is ready, and /v1 answers, when both are reachable", async () => {
    expect((await readyz()).statusCode).toBe(200);
    expect((await listWallets()).statusCode).toBe(200);
    expect((await app.inject({ url: "/healthz" })).statusCode).toBe(200);
  });

  it("answers /readyz 503 and /v1 503 problem+json while PostgreSQL is unreachable, and recovers", async () => {
    await pgProxy.cut();
    try {
      await eventually(async () => expect((await readyz()).statusCode).toBe(503));
      const ready = await readyz();
      expect(ready.headers["content-type"]).toContain("application/problem+json");
      expect(ready.json()).toMatchObject({ code: "unavailable", detail: "PostgreSQL cannot be reached" });
      const res = await listWallets();
      expect(res.statusCode).toBe(503);
      expect(res.headers["content-type"]).toContain("application/problem+json");
      expect(res.headers["retry-after"]).toBeDefined();
      expect(res.json()).toMatchObject({ status: 503, code: "unavailable" });
      // Liveness is not readiness: the process itself is fine.
      expect((await app.inject({ url: "/healthz" })).statusCode).toBe(200);
    } finally {
      await pgProxy.restore();
    }
    await eventually(async () => expect((await readyz()).statusCode).toBe(200));
    expect((await listWallets()).statusCode).toBe(200);
  });

  it("keeps answering 503 at once while PostgreSQL stays unreachable, not only to the first requests", async () => {
    await pgProxy.cut();
    try {
      // Every request's connection attempt fails; the pool's wait before the next attempt
      // grew with each failure (up to 20 s), and a request waited it out before its 503: past
      // the request deadline (REQUEST_TIMEOUT, 3 s here) from the fourth or so on. So each 503
      // must be the failed connection's, not the deadline's, which says it had no answer.
      for (let i = 0; i < 12; i++) {
        const res = await listWallets();
        expect(res.statusCode, `request ${i + 1}`).toBe(503);
        expect(res.json<{ detail: string }>().detail, `request ${i + 1}`).toBe(BACKING_SERVICE_UNAVAILABLE);
      }
    } finally {
      await pgProxy.restore();
    }
    // Back at once too, not after the pool's last wait (which the deadline would have cut short with a 503).
    const back = await listWallets();
    expect(back.statusCode, back.body).toBe(200);
  }, 90_000);

  it("answers /readyz 503 and /v1 503 problem+json while Redis is unreachable, and recovers", async () => {
    await redisProxy.cut();
    try {
      await eventually(async () => expect((await readyz()).statusCode).toBe(503));
      expect((await readyz()).json()).toMatchObject({ code: "unavailable", detail: "Redis cannot be reached" });
      const res = await listWallets();
      expect(res.statusCode).toBe(503);
      expect(res.headers["content-type"]).toContain("application/problem+json");
      expect(res.json()).toMatchObject({ status: 503, code: "unavailable" });
    } finally {
      await redisProxy.restore();
    }
    await eventually(async () => expect((await readyz()).statusCode).toBe(200));
    expect((await listWallets()).statusCode).toBe(200);
  });

  it("logs an unreachable Redis once, not on every rate-limit sync (ten a second)", async () => {
    const from = logLines.length;
    // A count waiting to be shared through Redis when it goes: Redis stops answering first, so
    // no sync can share the count between the request and the cut (every 100 ms, one could).
    redisProxy.stall();
    expect((await listWallets()).statusCode).toBe(200);
    await redisProxy.cut();
    try {
      await eventually(async () => expect((await readyz()).statusCode).toBe(503));
      // Some 30 syncs fail meanwhile.
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      const warning = (line: string) => line.includes("rate-limit counts could not reach Redis");
      // Said at all (in this outage, or within the minute before in the earlier one) …
      expect(logLines.some(warning)).toBe(true);
      // … and once per kind of error (the dropped connection, the refused reconnects), not per sync.
      expect(logLines.slice(from).filter(warning).length).toBeLessThanOrEqual(3);
    } finally {
      await redisProxy.restore();
    }
    await eventually(async () => expect((await readyz()).statusCode).toBe(200));
  });

  it("answers 503, not 500, when Redis goes away while a request waits for its answer", async () => {
    const transaction = {
      signature: randomSignature(), type: "transfer", amount: 1, token: "SOL", from: randomAddress(), to: randomAddress(),
      blockTime: 1_718_000_000, slot: 1, fee: 0.000005, status: "success",
    };
    const storedBatches = async () => (await deps.sql<{ n: number }[]>`select count(*)::int as n from ingest_batches`)[0]!.n;
    const before = await storedBatches();
    // As when Redis saves its data before it shuts down: the enqueue is sent and no answer comes.
    redisProxy.stall();
    try {
      const pending = app.inject({
        method: "POST",
        url: "/v1/ingest/transactions",
        headers: { authorization: `Bearer ${ingestToken}` },
        payload: { transactions: [transaction] },
      });
      await eventually(async () => expect(await storedBatches()).toBe(before + 1));
      await redisProxy.cut();
      const res = await pending;
      expect(res.statusCode, res.body).toBe(503);
      expect(res.headers["content-type"]).toContain("application/problem+json");
      expect(res.json()).toMatchObject({ code: "unavailable" });
    } finally {
      await redisProxy.restore();
    }
    await eventually(async () => expect((await readyz()).statusCode).toBe(200));
  });

  it("answers Bull Board's API 503 problem+json while Redis is unreachable, not Bull Board's own 500", async () => {
    const queuesApi = () => app.inject({ url: "/admin/queues/api/queues", headers: { authorization: ADMIN_AUTH } });
    expect((await queuesApi()).statusCode).toBe(200);
    await redisProxy.cut();
    try {
      await eventually(async () => expect((await readyz()).statusCode).toBe(503));
      const res = await queuesApi();
      expect(res.statusCode).toBe(503);
      expect(res.headers["content-type"]).toContain("application/problem+json");
      expect(res.headers["retry-after"]).toBeDefined();
      expect(res.json()).toMatchObject({ status: 503, code: "unavailable" });
    } finally {
      await redisProxy.restore();
    }
    await eventually(async () => expect((await queuesApi()).statusCode).toBe(200));
  });

  it("logs a metric it cannot read once per kind of error, not on every scrape", async () => {
    const scrape = () => app.inject({ url: "/metrics", headers: { authorization: ADMIN_AUTH } });
    const from = logLines.length;
    await redisProxy.cut();
    try {
      await eventually(async () => expect((await readyz()).statusCode).toBe(503));
      // Prometheus keeps scraping through the outage, every 15 s by default, from every API process.
      for (let i = 0; i < 6; i++) expect((await scrape()).statusCode).toBe(200);
      const warning = (line: string) => line.includes("metrics: Redis (queue counts) could not be read");
      const warned = logLines.slice(from).filter(warning);
      expect(warned.length).toBeGreaterThan(0);
      expect(warned.length, warned.join("")).toBeLessThanOrEqual(2);
    } finally {
      await redisProxy.restore();
    }
    await eventually(async () => expect((await readyz()).statusCode).toBe(200));
  });

  it("names both when both are unreachable", async () => {
    await pgProxy.cut();
    await redisProxy.cut();
    try {
      await eventually(async () =>
        expect((await readyz()).json()).toMatchObject({ detail: "PostgreSQL and Redis cannot be reached" }),
      );
    } finally {
      await pgProxy.restore();
      await redisProxy.restore();
    }
    await eventually(async () => expect((await readyz()).statusCode).toBe(200));
  });
});
