// A PostgreSQL that stops answering on open connections (a partition, a frozen primary, a long
// lock wait) raises no error: without a deadline a request waited with its statement, without
// limit. With one, the caller gets a 503 at REQUEST_TIMEOUT, whatever the handler does later
// is dropped quietly, and the API answers normally once PostgreSQL does again.
import { Writable } from "node:stream";
import postgres from "postgres";
import { afterAll, beforeAll, expect, it, vi } from "vitest";
import { loadConfig } from "../../src/config.ts";
import { createDeps, type Deps } from "../../src/deps.ts";
import { buildApp, type AppInstance } from "../../src/http/app.ts";
import { mintToken } from "../../src/http/mint-token.ts";
import { createLogger } from "../../src/logger.ts";
import { whenReady } from "../../src/redis.ts";
import { testEnv } from "../helpers/app.ts";
import { randomAddress } from "../helpers/chain.ts";
import { createTestDatabase, uniqueQueuePrefix } from "../helpers/db.ts";
import { deletePrefixKeysAt } from "../helpers/redis-keys.ts";
import { TEST_JWT_SECRET, TEST_REDIS_URL } from "../helpers/env.ts";
import { endpointOf, startTcpProxy, throughProxy, type TcpProxy } from "../helpers/tcp-proxy.ts";

const DEADLINE_MS = 2_000;

let database: Awaited<ReturnType<typeof createTestDatabase>>;
let pgProxy: TcpProxy;
let deps: Deps;
let app: AppInstance;
let token: string;
const prefix = uniqueQueuePrefix("postgres-stall");
const logLines: { level: number; msg: string }[] = [];

beforeAll(async () => {
  database = await createTestDatabase("postgres-stall");
  pgProxy = await startTcpProxy(endpointOf(database.url, 5432));
  const config = loadConfig(
    testEnv({ DATABASE_URL: throughProxy(database.url, pgProxy), QUEUE_PREFIX: prefix, REQUEST_TIMEOUT: `${DEADLINE_MS}ms` }),
  );
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logLines.push(JSON.parse(chunk.toString()) as { level: number; msg: string });
      done();
    },
  });
  deps = createDeps(config, { dbPoolSize: 2, logger: createLogger("debug", sink) });
  if (!(await whenReady(deps.redis, 5_000))) throw new Error("Redis is needed by the tests");
  app = await buildApp(deps);
  await app.ready();
  token = await mintToken(TEST_JWT_SECRET, { sub: "alice", scope: "wallets:read wallets:write", ttlSeconds: 600 }, config.jwt);
});
afterAll(async () => {
  await pgProxy?.close();
  await app?.close();
  await deps?.sql.end({ timeout: 0 });
  deps?.redis.disconnect();
  await deletePrefixKeysAt(TEST_REDIS_URL, prefix);
  await database?.drop();
});

const list = () => app.inject({ url: "/v1/wallets", headers: { authorization: `Bearer ${token}` } });
const track = (address: string) =>
  app.inject({ method: "POST", url: "/v1/wallets", headers: { authorization: `Bearer ${token}` }, payload: { address } });
// Polling for a state, not timing it: reconnection happens on the clients' own schedule.
const eventually = (check: () => Promise<void>) => vi.waitFor(check, { timeout: 20_000, interval: 100 });

type Answer = Awaited<ReturnType<typeof list>>;

/** The deadline's own 503 (not a dependency error's, which says a backing service is unavailable). */
function expectDeadline503(res: Answer) {
  expect(res.statusCode, res.body).toBe(503);
  expect(res.headers["content-type"]).toContain("application/problem+json");
  expect(res.headers["retry-after"]).toBe("5");
  expect(res.json()).toMatchObject({ code: "unavailable", status: 503 });
  expect(res.json<{ detail: string }>().detail).toMatch(new RegExp(`^no answer within ${DEADLINE_MS / 1000} s `));
}

/** Log lines that a late handler would leave: Fastify's, at warn and error, once per request. */
const lateNoise = () =>
  logLines.filter((line) => line.level >= 40 && /already sent|reply\.sent|unhandled error/i.test(JSON.stringify(line)));

/** Whether a stuck handler has failed yet (it can only once its connection drops). */
const handlerFailed = () => logLines.some((line) => line.msg.includes("failed afterwards"));

// The order of events, not their timing: each 503 comes while PostgreSQL is still stalled and
// the handler still waits on it, and the handler fails only after the connection is cut.
it("answers 503 at its deadline while PostgreSQL stops answering, and 200 once it answers again", { timeout: 60_000 }, async () => {
  expect((await list()).statusCode).toBe(200);
  await Promise.all([deps.sql`select pg_sleep(0.2)`, deps.sql`select pg_sleep(0.2)`]); // both pool connections open
  pgProxy.stall();
  // One request on each stuck connection, and one waiting for a connection behind them.
  const answered = (res: Answer) => ({ res, handlerFailedBefore: handlerFailed() });
  const answers = await Promise.all([list().then(answered), list().then(answered), list().then(answered)]);
  for (const { res, handlerFailedBefore } of answers) {
    expectDeadline503(res);
    expect(handlerFailedBefore, "a handler failed before its 503").toBe(false);
  }
  // Said once, not per request.
  expect(logLines.filter((line) => line.level === 40 && line.msg.startsWith("request deadline passed"))).toHaveLength(1);

  // Back: the stalled answers are lost, so the connections that waited for them are dropped and made anew.
  await pgProxy.cut();
  await pgProxy.restore();
  await eventually(async () => expect((await list()).statusCode).toBe(200));
  // The stuck handlers failed once their connections dropped, after their 503s: nobody to tell, nothing at warn.
  await eventually(async () => expect(handlerFailed()).toBe(true));
  expect(lateNoise()).toEqual([]);
});

it("answers 503 at its deadline while a write waits for a lock; the write lands later, and its retry finds it", { timeout: 60_000 }, async () => {
  // Straight to PostgreSQL, not through the proxy: a migration, say, holding the table.
  const holder = postgres(database.url, { max: 1, onnotice: () => {} });
  const address = randomAddress();
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let locked!: () => void;
  const lockHeld = new Promise<void>((resolve) => (locked = resolve));
  const holding = holder.begin(async (tx) => {
    await tx`lock table tracked_wallets in access exclusive mode`;
    locked();
    await released;
  });
  try {
    await lockHeld;
    // Answered while the lock is still held (it is let go only below), so before the write could land.
    expectDeadline503(await track(address));
  } finally {
    release();
    await holding;
    await holder.end();
  }
  // The handler went on once the lock was let go, and its 201 went nowhere.
  await eventually(async () => {
    const [row] = await deps.sql<{ n: number }[]>`select count(*)::int as n from tracked_wallets where address = ${address}`;
    expect(row!.n).toBe(1);
  });
  // A client that sends the create again learns that it was carried out, and where.
  const retried = await track(address);
  expect(retried.statusCode, retried.body).toBe(409);
  expect(retried.headers.location).toMatch(/^\/v1\/wallets\/wal_/);
  expect(lateNoise()).toEqual([]);
});

it("asks PostgreSQL to probe its end of each connection, so a vanished client's session and locks end within about 25 s", async () => {
  const [settings] = await deps.sql<{ idle: string; interval: string; count: string }[]>`
    select current_setting('tcp_keepalives_idle') as idle, current_setting('tcp_keepalives_interval') as interval,
           current_setting('tcp_keepalives_count') as count`;
  expect(settings).toEqual({ idle: "10", interval: "5", count: "3" });
});
