// PostgreSQL or Redis that answers but will not serve this process: the database dropped or a
// password changed under a running API, or a PostgreSQL that has become read-only (a failover
// onto a standby, default_transaction_read_only). The client can do nothing about any of it:
// /v1 answers 503 problem+json, not 500 with a stack per request, and /readyz says the cause
// in the server's words (never a password).
import { randomBytes } from "node:crypto";
import postgres from "postgres";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { randomAddress } from "../helpers/chain.ts";
import { createTestDatabase } from "../helpers/db.ts";
import { TEST_ADMIN_DATABASE_URL } from "../helpers/env.ts";
import { waitFor } from "../helpers/pipeline.ts";
import { startPasswordRedis, type PasswordRedis } from "../helpers/redis-server.ts";
import { bearer } from "../helpers/seed.ts";

const PASSWORD = "s3cret-redis-pw";
const opened: TestApp[] = [];
let redis: PasswordRedis | undefined;

afterEach(async () => {
  for (const t of opened.splice(0)) await t.close();
});
afterAll(async () => {
  await redis?.stop();
});

async function open(label: string, env: Record<string, string> = {}): Promise<TestApp> {
  const t = await startTestApp(label, env);
  opened.push(t);
  return t;
}

/** Statements on the test database from outside the app's pool. */
async function asAdmin(statement: string): Promise<void> {
  const admin = postgres(TEST_ADMIN_DATABASE_URL, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(statement);
  } finally {
    await admin.end();
  }
}

const databaseOf = (t: TestApp) => new URL(t.config.databaseUrl).pathname.slice(1);
const readyz = (t: TestApp) => t.app.inject({ url: "/readyz" });

describe("a PostgreSQL that refuses the running API", () => {
  it("answers /v1 503 problem+json and names the cause in /readyz once its database is dropped", async () => {
    const t = await open("refusing-dependencies-dropped");
    const token = await t.token("alice");
    expect((await readyz(t)).statusCode).toBe(200);
    const name = databaseOf(t);
    await asAdmin(`drop database ${name} with (force)`);

    const ready = await waitFor("/readyz to name the missing database", async () => {
      const res = await readyz(t);
      return res.statusCode === 503 && !res.json().detail.includes("cannot be reached") ? res : null;
    });
    expect(ready.headers["content-type"]).toContain("application/problem+json");
    expect(ready.json()).toMatchObject({ code: "unavailable", detail: `PostgreSQL refused the connection: database "${name}" does not exist (3D000)` });
    expect(ready.headers["retry-after"]).toBe("30");

    const res = await t.app.inject({ url: "/v1/wallets", headers: bearer(token) });
    expect(res.statusCode, res.body).toBe(503);
    expect(res.headers["content-type"]).toContain("application/problem+json");
    expect(res.headers["retry-after"]).toBeDefined();
    expect(res.json()).toMatchObject({ status: 503, code: "unavailable" });
  });
});

describe("a PostgreSQL with no connection left for the API", () => {
  it("names the server's 53300 in /readyz with what to do, not \"cannot be reached\", and is ready once a connection is free", async () => {
    // A role whose one connection another process holds: as when every process's pool together
    // has taken max_connections (or the role's limit), which the server refuses with the same code.
    const role = `wa_test_limit_${randomBytes(3).toString("hex")}`;
    await asAdmin(`create role ${role} login connection limit 1 in role pg_read_all_data`);
    const database = await createTestDatabase("refusing-dependencies-connection-limit");
    const asRole = new URL(database.url);
    asRole.username = role;
    const holder = postgres(asRole.toString(), { max: 1, onnotice: () => {} });
    let t: TestApp | undefined;
    try {
      await holder`select 1`;
      t = await startTestApp("refusing-dependencies-connection-limit", { DATABASE_URL: asRole.toString() });
      const token = await t.token("alice");

      const ready = await readyz(t);
      expect(ready.statusCode).toBe(503);
      expect(ready.headers["content-type"]).toContain("application/problem+json");
      expect(ready.json()).toMatchObject({
        code: "unavailable",
        detail:
          `PostgreSQL refused the connection: too many connections for role "${role}" (53300); run fewer processes or a smaller ` +
          "DATABASE_POOL_SIZE (each process opens up to that many connections), or raise max_connections or the role's (or database's) CONNECTION LIMIT",
      });
      expect(ready.headers["retry-after"]).toBe("30");
      const res = await t.app.inject({ url: "/v1/wallets", headers: bearer(token) });
      expect(res.statusCode, res.body).toBe(503);
      expect(res.json()).toMatchObject({ status: 503, code: "unavailable" });

      await holder.end();
      await waitFor("/readyz to be ready once the connection is free", async () => (await readyz(t!)).statusCode === 200);
    } finally {
      await t?.close();
      await holder.end();
      await database.drop();
      await asAdmin(`drop role if exists ${role}`);
    }
  });
});

describe("a Redis that refuses the running API", () => {
  it("names Redis's refusal in /readyz, without the password, once the password changed and the connection dropped", async () => {
    redis = await startPasswordRedis(PASSWORD);
    const t = await open("refusing-dependencies-redis", { REDIS_URL: redis.url(PASSWORD) });
    expect((await readyz(t)).statusCode).toBe(200);
    await redis.admin.config("SET", "requirepass", "rotated-redis-pw");
    try {
      await redis.admin.client("KILL", "TYPE", "normal");
      const ready = await waitFor("/readyz to name Redis's refusal", async () => {
        const res = await readyz(t);
        return res.statusCode === 503 && res.json().detail.includes("refused") ? res : null;
      });
      expect(ready.json()).toMatchObject({
        code: "unavailable",
        detail: "Redis refused the connection: WRONGPASS invalid username-password pair or user is disabled.",
      });
      expect(ready.body).not.toContain(PASSWORD);
    } finally {
      // Back, and reconnected, so that the app closes (and cleans its keys and database) as usual.
      await redis.admin.config("SET", "requirepass", PASSWORD);
      await waitFor("the app's Redis connection to be ready again", async () => t.deps.redis.status === "ready");
    }
    expect((await readyz(t)).statusCode).toBe(200);
  });
});

describe("a read-only PostgreSQL", () => {
  it("is not ready (read-only, a standby?) and answers a write 503 problem+json, not 500", async () => {
    const t = await open("refusing-dependencies-read-only");
    const token = await t.token("alice");
    const name = databaseOf(t);
    // As after a failover onto a standby: every new session refuses writes. The app's pooled
    // sessions are ended so that its next ones are new.
    await asAdmin(`alter database ${name} set default_transaction_read_only = on`);
    await asAdmin(`select pg_terminate_backend(pid) from pg_stat_activity where datname = '${name}'`);

    const ready = await waitFor("/readyz to say read-only", async () => {
      const res = await readyz(t);
      return res.statusCode === 503 && res.json().detail.includes("read-only") ? res : null;
    });
    expect(ready.headers["content-type"]).toContain("application/problem+json");
    expect(ready.json()).toMatchObject({ code: "unavailable", detail: "PostgreSQL is read-only (a standby?)" });

    const write = () => t.app.inject({ method: "POST", url: "/v1/wallets", headers: bearer(token), payload: { address: randomAddress() } });
    const res = await write();
    expect(res.statusCode, res.body).toBe(503);
    expect(res.headers["content-type"]).toContain("application/problem+json");
    expect(res.json()).toMatchObject({ status: 503, code: "unavailable" });
    // Reads still work: it is the writes a standby refuses.
    expect((await t.app.inject({ url: "/v1/wallets", headers: bearer(token) })).statusCode).toBe(200);

    await asAdmin(`alter database ${name} reset default_transaction_read_only`);
    await asAdmin(`select pg_terminate_backend(pid) from pg_stat_activity where datname = '${name}'`);
    await waitFor("/readyz to be ready again", async () => (await readyz(t)).statusCode === 200);
    expect((await write()).statusCode).toBe(201);
  });
});
