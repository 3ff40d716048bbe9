// A Redis full at maxmemory under the noeviction policy the README requires answers every write
// "OOM command not allowed when used memory > 'maxmemory'". Ingest stores the batch in
// PostgreSQL first, then enqueues its evaluation: that enqueue is refused. It is an outage like
// Redis being down — 503 with Retry-After, logged as "dependency unavailable" (not an error per
// request) — and the stored rows are picked up by the reconciler once Redis takes writes again.
// A Helius delivery's refused items are kept all the same: Helius may give up retrying.
// Against a real redis-server of the test's own, filled until it refuses.
import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mintToken } from "../../src/http/mint-token.ts";
import { runReconcileOnce } from "../../src/pipeline/reconcile.ts";
import { QUEUES } from "../../src/queue/names.ts";
import { randomAddress, randomSignature } from "../helpers/chain.ts";
import { TEST_JWT_SECRET } from "../helpers/env.ts";
import { startLoggedApp, type LoggedApp } from "../helpers/logged-app.ts";
import { startOwnRedis, type OwnRedis } from "../helpers/redis-server.ts";
import { bearer, expectProblem, makeTransaction } from "../helpers/seed.ts";

const SECRET = "ingest-redis-full-auth-header-0123";
const FILL = "{ingest-redis-full-fill}:";

let redis: OwnRedis;
let admin: Redis;
let logged: LoggedApp;
let token: string;

beforeAll(async () => {
  redis = await startOwnRedis({ args: ["--maxmemory-policy", "noeviction"] });
  ({ admin } = redis);
  logged = await startLoggedApp("ingest-redis-full", { REDIS_URL: redis.url(), HELIUS_AUTH_HEADER: SECRET }, "warn");
  await logged.app.ready();
  token = await mintToken(TEST_JWT_SECRET, { sub: "ingestor", scope: "ingest:write", ttlSeconds: 3600 }, logged.deps.config.jwt);
}, 30_000);

afterAll(async () => {
  await admin?.config("SET", "maxmemory", "0").catch(() => {});
  await logged?.close();
  await redis?.stop();
});

const usedMemory = async () => Number(/used_memory:(\d+)/.exec(await admin.info("memory"))![1]);

/**
 * Sets a limit a little above what Redis holds now, writes until Redis refuses, then sets the
 * limit 1 MiB under what it holds: refused at the limit's edge, Redis took the next small write
 * once a client's buffer shrank (an enqueue went through in CI), and 1 MiB under, it refuses
 * every write until the fill is emptied.
 */
async function fillRedis(): Promise<void> {
  await admin.config("SET", "maxmemory", String((await usedMemory()) + 2 * 1024 * 1024));
  const chunk = "x".repeat(64 * 1024);
  for (let i = 0; ; i++) {
    try {
      await admin.set(`${FILL}${i}`, chunk);
    } catch (error) {
      expect(String((error as Error).message)).toMatch(/^OOM command not allowed/);
      await admin.config("SET", "maxmemory", String((await usedMemory()) - 1024 * 1024));
      return;
    }
    if (i > 1_000) throw new Error("Redis took 64 MiB past a 2 MiB headroom: maxmemory is not in force");
  }
}

async function emptyFill(): Promise<void> {
  const keys = await admin.keys(`${FILL}*`);
  if (keys.length > 0) await admin.del(...keys);
}

const stored = async (signature: string) =>
  (await logged.deps.sql<{ batchId: string }[]>`select batch_id as "batchId" from transactions where signature = ${signature} and leg = 0`)[0]?.batchId;

const heliusItem = () => ({
  signature: randomSignature(),
  slot: 280_000_000,
  timestamp: 1_720_000_000,
  fee: 5000,
  feePayer: randomAddress(),
  type: "TRANSFER",
  nativeTransfers: [{ fromUserAccount: randomAddress(), toUserAccount: randomAddress(), amount: 1_500_000_000 }],
});

const lines = () => logged.lines.map((line) => JSON.parse(line) as { level: number; msg: string; err?: { message?: string } });

describe("ingest while Redis is full (maxmemory, noeviction)", () => {
  const native = makeTransaction();
  const helius = heliusItem();
  const refused = { ...heliusItem(), fee: -1 };

  it("answers 503 with Retry-After on both ingest routes, logs the outage once at warn and no error, and keeps the rows and refused items", async () => {
    await fillRedis();
    const nativeRes = await logged.app.inject({
      method: "POST",
      url: "/v1/ingest/transactions",
      headers: bearer(token),
      payload: { transactions: [native] },
    });
    expectProblem(nativeRes, 503, "unavailable");
    expect(nativeRes.headers["retry-after"]).toBeDefined();

    const heliusRes = await logged.app.inject({ method: "POST", url: "/v1/ingest/helius", headers: { authorization: SECRET }, payload: [helius, refused] });
    expectProblem(heliusRes, 503, "unavailable");
    expect(heliusRes.headers["retry-after"]).toBeDefined();

    // Stored before the refused enqueue, each as a batch of its own.
    expect(await stored(native.signature)).toBeDefined();
    expect(await stored(helius.signature)).toBeDefined();
    expect((await logged.deps.sql`select signature from helius_rejected_items`).map((row) => row.signature)).toEqual([refused.signature]);

    const logs = lines();
    expect(logs.filter((line) => line.level >= 50)).toEqual([]);
    expect(logs.filter((line) => line.msg.startsWith("helius: refused 1 of 2 items"))).toHaveLength(1);
    // At warn once a minute for each kind of error (a repeat is logged at debug).
    const outage = logs.filter((line) => line.msg === "dependency unavailable");
    expect(outage.length).toBeGreaterThanOrEqual(1);
    for (const line of outage) expect(line.err?.message).toMatch(/OOM command not allowed/);
  });

  it("leaves the stored batches to the reconciler, which enqueues them once Redis takes writes again", async () => {
    await emptyFill();
    const batches = [await stored(native.signature), await stored(helius.signature)];
    const queue = logged.deps.queues[QUEUES.transactions];
    for (const batchId of batches) expect(await queue.getJobState(batchId!)).toBe("unknown");
    // No grace period, a clock a second ahead: both batches count as owed.
    await runReconcileOnce({ ...logged.deps, now: () => new Date(Date.now() + 1_000) }, { graceMs: 0 });
    for (const batchId of batches) expect(await queue.getJobState(batchId!)).toBe("waiting");
    // And a retry of the batch by its sender stores nothing twice.
    const again = await logged.app.inject({ method: "POST", url: "/v1/ingest/transactions", headers: bearer(token), payload: { transactions: [native] } });
    expect(again.statusCode, again.body).toBe(202);
    expect(again.json()).toEqual({ accepted: 0, duplicates: 1 });
  });
});
