// A first tracking seeds the address's activity counters in Redis (src/pipeline/track-wallet.ts).
// A Redis that stops answering raises no error: the seeding waited for ever, and so did every
// ingest of every API process while the seeding ran under ingest's lock. Now the seeding is
// bounded (the tracking is rolled back and answered 503, and sends nothing more once Redis
// answers again), and it runs before the tracking takes ingest's lock: no ingest waits for it.
import type { Command } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newId } from "../../src/ids.ts";
import { createLogger } from "../../src/logger.ts";
import { activityStateKey } from "../../src/pipeline/activity.ts";
import { seedingTimeoutMs, trackWallet } from "../../src/pipeline/track-wallet.ts";
import { createCommandRedis, whenReady } from "../../src/redis.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { randomAddress } from "../helpers/chain.ts";
import { TEST_REDIS_URL } from "../helpers/env.ts";
import { startLoggedApp, type LoggedApp } from "../helpers/logged-app.ts";
import { bearer, makeTransaction } from "../helpers/seed.ts";
import { endpointOf, startTcpProxy, throughProxy, type TcpProxy } from "../helpers/tcp-proxy.ts";
import { waitFor } from "../helpers/wait.ts";

/** The ingest lock's keys (address-counters.ts: "acti", 0), as pg_locks shows a two-key advisory lock. */
const INGEST_LOCK = { classid: 0x61637469, objid: 0, objsubid: 2 };

let redisProxy: TcpProxy;
/** The API process whose Redis stops answering. */
let t: TestApp;
/** Another API process on the same database, whose Redis answers. */
let other: LoggedApp;
let alice: string;

beforeAll(async () => {
  redisProxy = await startTcpProxy(endpointOf(TEST_REDIS_URL, 6379));
  t = await startTestApp("tracking-hung-redis", { REDIS_URL: throughProxy(TEST_REDIS_URL, redisProxy), REQUEST_TIMEOUT: "4s" });
  other = await startLoggedApp("tracking-hung-redis-other", { DATABASE_URL: t.config.databaseUrl }, "silent");
  alice = await t.token("alice");
});
/** Cut and restored (answers flowing again), and the app's connection back. */
async function redisBack(): Promise<void> {
  await redisProxy.cut();
  await redisProxy.restore();
  await waitFor("Redis to answer again", async () => (await t.deps.redis.ping().catch(() => null)) === "PONG", 10_000);
}

afterAll(async () => {
  // So that the app's own clean-up can reach Redis.
  await redisBack();
  await other.close();
  await t.close();
  await redisProxy.close();
});

/** Whether a session holds (granted) or waits for (not granted) ingest's lock in `mode`. */
async function ingestLock(mode: "ExclusiveLock" | "ShareLock", granted: boolean): Promise<boolean> {
  const [row] = await t.deps.sql<{ n: number }[]>`
    select count(*)::int as n from pg_locks
    where locktype = 'advisory' and database = (select oid from pg_database where datname = current_database())
      and classid = ${INGEST_LOCK.classid} and objid = ${INGEST_LOCK.objid} and objsubid = ${INGEST_LOCK.objsubid}
      and mode = ${mode} and granted = ${granted}`;
  return (row?.n ?? 0) > 0;
}

describe("a tracking while Redis does not answer", () => {
  it("is a 503 that stores nothing, and an ingest of another API process meanwhile is not held back by it", async () => {
    const address = randomAddress();
    // A key of the address's counters, which the seeding deletes first: once it is gone, the
    // seeding has sent its first command and waits for the answer that does not come.
    const counters = activityStateKey(t.config.queuePrefix, address);
    await other.deps.redis.set(counters, "left from an earlier tracking");
    redisProxy.stall();
    const settled: string[] = [];
    const tracking = t.app
      .inject({ method: "POST", url: "/v1/wallets", headers: bearer(alice), payload: { address } })
      .finally(() => settled.push("tracking"));
    await waitFor("the seeding to wait for Redis", async () => (await other.deps.redis.exists(counters)) === 0, 5_000);
    // Seeding under ingest's lock, as it did, the tracking held this ingest back until its 503.
    expect(await ingestLock("ExclusiveLock", true)).toBe(false);
    const ingested = await other.app
      .inject({ method: "POST", url: "/v1/ingest/transactions", headers: bearer(alice), payload: { transactions: [makeTransaction({ from: address })] } })
      .finally(() => settled.push("ingest"));
    expect(ingested.statusCode, ingested.body).toBe(202);

    const tracked = await tracking;
    expect(tracked.statusCode, tracked.body).toBe(503);
    expect(tracked.headers["content-type"]).toContain("application/problem+json");
    expect(tracked.headers["retry-after"]).toBe("5");
    expect(tracked.json()).toMatchObject({
      code: "unavailable",
      detail: `the activity counters could not be seeded: Redis did not answer within ${seedingTimeoutMs(t.config)} ms; nothing was stored, retry shortly`,
    });
    expect(settled).toEqual(["ingest", "tracking"]);
    const [stored] = await t.deps.sql<{ n: number }[]>`select count(*)::int as n from tracked_wallets where address = ${address}`;
    expect(stored!.n).toBe(0);

    // Redis answers again: the retry tracks it.
    await redisBack();
    const retried = await t.app.inject({ method: "POST", url: "/v1/wallets", headers: bearer(alice), payload: { address } });
    expect(retried.statusCode, retried.body).toBe(201);
  }, 30_000);

  it("sends nothing more for the address once it has given up, when Redis answers at last", async () => {
    const address = randomAddress();
    // History in the replayed days, evaluated: a seeding that went on would replay it into the counters.
    const ingested = await other.app.inject({
      method: "POST",
      url: "/v1/ingest/transactions",
      headers: bearer(alice),
      payload: { transactions: [makeTransaction({ from: address, blockTime: Math.floor(Date.now() / 1000) - 3_600 })] },
    });
    expect(ingested.statusCode).toBe(202);
    await t.deps.sql`update ingest_batches set evaluated_at = now() where evaluated_at is null`;

    // A connection whose answer to the deletion of the address's counters comes only when the test says.
    const late = createCommandRedis(TEST_REDIS_URL);
    const sent: string[] = [];
    let answerNow!: () => void;
    const answering = new Promise<void>((resolve) => (answerNow = resolve));
    let heldAnswer: Promise<unknown> | undefined;
    const send = late.sendCommand.bind(late);
    late.sendCommand = (command: Command, stream?: Parameters<typeof send>[1]) => {
      sent.push(command.name);
      const deletesCounters = command.name === "unlink" && command.args.includes(activityStateKey(t.config.queuePrefix, address));
      if (heldAnswer !== undefined || !deletesCounters) return send(command, stream);
      heldAnswer = answering.then(() => send(command, stream));
      return command.promise;
    };
    try {
      expect(await whenReady(late, 5_000)).toBe(true);
      const outcome = await trackWallet(
        { ...t.deps, redis: late, logger: createLogger("silent"), config: { ...t.deps.config, requestTimeoutMs: 1_000 } },
        { id: newId("wal"), owner: "alice", address, alias: null, tags: [] },
      );
      expect(outcome).toMatchObject({ kind: "unavailable" });
      const before = sent.length;
      answerNow();
      await heldAnswer;
      // A round trip after the late answer: what the seeding sends upon it is sent by then.
      expect(await late.ping()).toBe("PONG");
      expect(sent.slice(before)).toEqual(["ping"]);
    } finally {
      late.disconnect();
    }
  });
});
