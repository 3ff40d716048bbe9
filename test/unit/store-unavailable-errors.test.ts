// isUnavailableError, the one notion of "our PostgreSQL or Redis cannot serve us now" that the
// API (503) and the workers (a job failure logged once a minute) share. The errors are the
// clients' own, as they reject a query or command: postgres.js and drizzle against a port
// nothing listens on and against the real PostgreSQL, ioredis against that port and the real
// Redis. The channels' errors are the words deliver.ts and disabled-notice.ts throw.
import { sql as raw } from "drizzle-orm";
import { Redis, ReplyError } from "ioredis";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isUnavailableError } from "../../src/dependency-errors.ts";
import { createDb } from "../../src/db/client.ts";
import { createCommandRedis, createWorkerRedis, whenReady } from "../../src/redis.ts";
import { TEST_ADMIN_DATABASE_URL, TEST_REDIS_URL } from "../helpers/env.ts";
import { freePort } from "../helpers/ports.ts";

async function rejection(run: () => Promise<unknown>): Promise<unknown> {
  try {
    await run();
  } catch (error) {
    return error;
  }
  throw new Error("expected a rejection");
}

let deadPort: number;
beforeAll(async () => {
  deadPort = await freePort();
});

describe("postgres.js's errors", () => {
  const closed: Array<{ end: () => Promise<unknown> }> = [];
  afterAll(async () => {
    for (const client of closed) await client.end();
  });

  it("are an outage for a refused connection, a pool already ended, a server going down, and through drizzle's wrapper", async () => {
    const refusing = createDb(`postgres://app@127.0.0.1:${deadPort}/wallet_alerts`, { max: 1 });
    closed.push(refusing.sql);
    const refused = await rejection(() => refusing.sql`select 1`);
    expect(refused).toMatchObject({ code: "ECONNREFUSED" });
    expect(isUnavailableError(refused)).toBe(true);
    // drizzle's "Failed query: …", with postgres.js's error as its cause.
    const wrapped = await rejection(() => refusing.db.execute(raw`select 1`));
    expect((wrapped as Error).message).toMatch(/^Failed query: select 1/);
    expect(isUnavailableError(wrapped)).toBe(true);

    const ended = postgres(TEST_ADMIN_DATABASE_URL, { max: 1, onnotice: () => {} });
    await ended.end();
    const afterEnd = await rejection(() => ended`select 1`);
    expect(afterEnd).toMatchObject({ code: "CONNECTION_ENDED" });
    expect(isUnavailableError(afterEnd)).toBe(true);

    expect(isUnavailableError(new postgres.PostgresError({ message: "terminating connection due to administrator command", code: "57P01" } as never))).toBe(true);
    expect(isUnavailableError(new postgres.PostgresError({ message: "the database system is starting up", code: "57P03" } as never))).toBe(true);
  });

  it("are not an outage when the server answers the query with an error of its own", async () => {
    const live = createDb(TEST_ADMIN_DATABASE_URL, { max: 1 });
    closed.push(live.sql);
    const missing = await rejection(() => live.db.execute(raw`select * from no_such_table_here`));
    expect((missing as { cause?: unknown }).cause).toMatchObject({ code: "42P01" });
    expect(isUnavailableError(missing)).toBe(false);
  });
});

describe("ioredis's errors", () => {
  const clients: Redis[] = [];
  afterAll(() => {
    for (const client of clients) client.disconnect();
  });
  const quiet = (client: Redis) => (client.on("error", () => {}), clients.push(client), client);

  it("are an outage for a connection that is gone or not ready, and for Redis's own 'not now' answers", async () => {
    // The API's fail-fast connection: "Stream isn't writeable and enableOfflineQueue options is false".
    const command = quiet(createCommandRedis(`redis://127.0.0.1:${deadPort}`, { retryStrategy: () => null }));
    // A worker's, once its connection has ended: "Connection is closed.".
    const worker = quiet(createWorkerRedis(`redis://127.0.0.1:${deadPort}`, { lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 1 }));
    // A command queued while the connection is down, past its retries: MaxRetriesPerRequestError.
    const queued = quiet(new Redis(`redis://127.0.0.1:${deadPort}`, { maxRetriesPerRequest: 1, retryStrategy: () => 10 }));
    const errors = [await rejection(() => command.get("x")), await rejection(() => worker.get("x")), await rejection(() => queued.get("x"))];
    expect(errors.map((error) => (error as Error).name)).toEqual(["Error", "Error", "MaxRetriesPerRequestError"]);
    for (const error of errors) expect(isUnavailableError(error), String(error)).toBe(true);

    expect(isUnavailableError(new ReplyError("LOADING Redis is loading the dataset in memory"))).toBe(true);
    expect(isUnavailableError(new ReplyError("NOAUTH Authentication required."))).toBe(true);
  });

  it("are not an outage when Redis answers a command with an error of its own", async () => {
    const live = quiet(createCommandRedis(TEST_REDIS_URL));
    expect(await whenReady(live, 5_000)).toBe(true);
    const unknown = await rejection(() => live.call("no-such-command-here"));
    expect((unknown as Error).name).toBe("ReplyError");
    expect(isUnavailableError(unknown)).toBe(false);
  });
});

describe("errors that are not our stores' clients'", () => {
  it("are not an outage however they are worded: a receiver's or an SMTP server's words, thrown by our own code", () => {
    // A delivery given up on a webhook receiver that refuses connections; a disabled-alert
    // notice whose SMTP server is away.
    expect(isUnavailableError(new Error("ECONNREFUSED: connect ECONNREFUSED 203.0.113.5:443 (gave up after 8 attempts)"))).toBe(false);
    expect(isUnavailableError(new Error("ECONNRESET: read ECONNRESET"))).toBe(false);
    expect(isUnavailableError(new Error("ETIMEDOUT: the SMTP server did not answer; Connection is closed"))).toBe(false);
    // Such words do not become ours by wrapping an error of the clients that says something else.
    const cause = new postgres.PostgresError({ message: "duplicate key value violates unique constraint", code: "23505" } as never);
    expect(isUnavailableError(new Error("ECONNREFUSED: connect ECONNREFUSED 203.0.113.5:443", { cause }))).toBe(false);
  });
});
