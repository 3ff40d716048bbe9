// PostgreSQL or Redis that answers but will not serve this process: the database dropped or a
// password changed under a running API, or a PostgreSQL that has become read-only (a failover
// onto a standby, default_transaction_read_only). The client can do nothing about any of it:
// /v1 answers 503 problem+json, not 500 with a stack per request, and /readyz, which answers
// anyone, names the service and that it refused ("PostgreSQL refused the connection (see the
// log)"), never the server's words: those name the role, the database or the Redis user. The
// log has them, once each time the refusal changes (never a password).
import { randomBytes } from "node:crypto";
import { Writable } from "node:stream";
import postgres from "postgres";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.ts";
import { createDeps, type Deps } from "../../src/deps.ts";
import { buildApp, type AppInstance } from "../../src/http/app.ts";
import { createLogger } from "../../src/logger.ts";
import { whenReady } from "../../src/redis.ts";
import { startTestApp, testEnv, type TestApp } from "../helpers/app.ts";
import { randomAddress } from "../helpers/chain.ts";
import { createTestDatabase, uniqueQueuePrefix } from "../helpers/db.ts";
import { TEST_ADMIN_DATABASE_URL, databaseUrl } from "../helpers/env.ts";
import { waitFor } from "../helpers/pipeline.ts";
import { deletePrefixKeys } from "../helpers/redis-keys.ts";
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
const readyz = (t: { app: AppInstance }) => t.app.inject({ url: "/readyz" });

/** What /readyz says of a refusal: the service and the kind, the server's words only in the log. */
const REFUSED_POSTGRES = "PostgreSQL refused the connection (see the log)";

type LogLine = { level: number; msg: string; setting?: string; url?: string; code?: string };

/** The API on DATABASE_URL `url`, logging at info into lines the test reads. */
async function openLogged(label: string, url: string): Promise<{ app: AppInstance; deps: Deps; logs: () => LogLine[]; close: () => Promise<void> }> {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  const prefix = uniqueQueuePrefix(label);
  const config = loadConfig(testEnv({ DATABASE_URL: url, QUEUE_PREFIX: prefix }));
  const deps = createDeps(config, { logger: createLogger("info", sink), dbPoolSize: 2 });
  if (!(await whenReady(deps.redis, 5_000))) throw new Error("Redis is needed by the tests");
  const app = await buildApp(deps);
  await app.ready();
  return {
    app,
    deps,
    logs: () => lines.map((line) => JSON.parse(line) as LogLine),
    close: async () => {
      await app.close();
      await deletePrefixKeys(deps.redis, prefix);
      await deps.close();
    },
  };
}

/** The readiness check's lines: what /readyz left out. */
const readinessLines = (lines: LogLine[]) => lines.filter((line) => line.msg.startsWith("readiness: "));

describe("a PostgreSQL that refuses the running API", () => {
  it("answers /v1 503 problem+json and says PostgreSQL refused it in /readyz, without the database's name, once its database is dropped", async () => {
    const t = await open("refusing-dependencies-dropped");
    const token = await t.token("alice");
    expect((await readyz(t)).statusCode).toBe(200);
    const name = databaseOf(t);
    await asAdmin(`drop database ${name} with (force)`);

    const ready = await waitFor("/readyz to say PostgreSQL refused the connection", async () => {
      const res = await readyz(t);
      return res.statusCode === 503 && !res.json().detail.includes("cannot be reached") ? res : null;
    });
    expect(ready.headers["content-type"]).toContain("application/problem+json");
    expect(ready.json()).toMatchObject({ code: "unavailable", detail: REFUSED_POSTGRES });
    expect(ready.body).not.toContain(name);
    expect(ready.headers["retry-after"]).toBe("30");

    const res = await t.app.inject({ url: "/v1/wallets", headers: bearer(token) });
    expect(res.statusCode, res.body).toBe(503);
    expect(res.headers["content-type"]).toContain("application/problem+json");
    expect(res.headers["retry-after"]).toBeDefined();
    expect(res.json()).toMatchObject({ status: 503, code: "unavailable" });
  });
});

describe("a PostgreSQL with no connection left for the API", () => {
  it("says PostgreSQL refused the connection in /readyz (not \"cannot be reached\", not the role), and is ready once a connection is free", async () => {
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
      // The role's name and what to do (run fewer processes, …) are in the log: see below.
      expect(ready.json()).toMatchObject({ code: "unavailable", detail: REFUSED_POSTGRES });
      expect(ready.body).not.toContain(role);
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
  it("says Redis refused it in /readyz, without the server's words or the password, once the password changed and the connection dropped", async () => {
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
      expect(ready.json()).toMatchObject({ code: "unavailable", detail: "Redis refused the connection (see the log)" });
      expect(ready.body).not.toContain("WRONGPASS");
      expect(ready.body).not.toContain(PASSWORD);
    } finally {
      // Back, and reconnected, so that the app closes (and cleans its keys and database) as usual.
      await redis.admin.config("SET", "requirepass", PASSWORD);
      await waitFor("the app's Redis connection to be ready again", async () => t.deps.redis.status === "ready");
    }
    expect((await readyz(t)).statusCode).toBe(200);
  });
});

describe("a DATABASE_URL that PostgreSQL refuses", () => {
  it("keeps a database that does not exist out of /readyz, and logs the server's words once, not on every probe", async () => {
    const name = `wa_test_missing_${randomBytes(4).toString("hex")}`;
    const t = await openLogged("refusing-dependencies-missing-database", databaseUrl(name));
    try {
      for (let probe = 0; probe < 3; probe++) {
        const res = await readyz(t);
        expect(res.statusCode).toBe(503);
        expect(res.headers["content-type"]).toContain("application/problem+json");
        expect(res.headers["retry-after"]).toBe("30");
        expect(res.json()).toMatchObject({ code: "unavailable", detail: REFUSED_POSTGRES });
        expect(res.body).not.toContain(name);
      }
      expect(readinessLines(t.logs())).toEqual([
        expect.objectContaining({
          level: 50,
          setting: "DATABASE_URL",
          code: "3D000",
          url: databaseUrl(name),
          msg: expect.stringContaining(`readiness: PostgreSQL refused the connection: database "${name}" does not exist (3D000) — check DATABASE_URL`),
        }),
      ]);
    } finally {
      await t.close();
    }
  });

  it("keeps a role that does not exist out of /readyz, logs the server's words once, and logs once more when the role appears and /readyz is ready", async () => {
    const role = `wa_test_nobody_${randomBytes(3).toString("hex")}`;
    const database = await createTestDatabase("refusing-dependencies-missing-role");
    const asRole = new URL(database.url);
    asRole.username = role;
    let t: Awaited<ReturnType<typeof openLogged>> | undefined;
    try {
      t = await openLogged("refusing-dependencies-missing-role", asRole.toString());
      for (let probe = 0; probe < 3; probe++) {
        const res = await readyz(t);
        expect(res.statusCode).toBe(503);
        expect(res.json()).toMatchObject({ code: "unavailable", detail: REFUSED_POSTGRES });
        expect(res.body).not.toContain(role);
      }
      const refused = readinessLines(t.logs());
      expect(refused).toEqual([expect.objectContaining({ level: 50, setting: "DATABASE_URL", msg: expect.stringContaining("readiness: PostgreSQL refused the connection: ") })]);
      // 28000 (no such role) or 28P01 (its password refused), as the server authenticates: either names the role.
      expect(refused[0]!.msg).toContain(`"${role}"`);

      await asAdmin(`create role ${role} login in role pg_read_all_data`);
      await waitFor("/readyz to be ready once the role exists", async () => (await readyz(t!)).statusCode === 200);
      expect((await readyz(t)).statusCode).toBe(200);
      expect(readinessLines(t.logs()).slice(1)).toEqual([
        expect.objectContaining({ level: 30, setting: "DATABASE_URL", msg: "readiness: PostgreSQL accepts the connection again" }),
      ]);
    } finally {
      await t?.close();
      await database.drop();
      await asAdmin(`drop role if exists ${role}`);
    }
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
