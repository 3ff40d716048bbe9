// Settings that PostgreSQL or Redis refuse (a wrong password, an unknown user or database) do
// not heal by waiting. The worker and the API check them at start and exit 1 with one fatal
// line naming the setting (password hidden) and the server's words; a worker whose Redis
// starts refusing it later does the same. Before, a worker refused by Redis spun at 100 % CPU
// in BullMQ's retry loop, ignored SIGTERM and never said more than one warning.
import { randomBytes } from "node:crypto";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { databaseUrl, TEST_ADMIN_DATABASE_URL } from "../helpers/env.ts";
import { exited, exitWithin, spawnApi, spawnWorker, waitFor } from "../helpers/pipeline.ts";
import { freePort } from "../helpers/ports.ts";
import { startPasswordRedis, type PasswordRedis } from "../helpers/redis-server.ts";

const PASSWORD = "s3cret-redis-pw";
const WRONG = "wrong-redis-pw";
/** Start-up (tsx) plus the check: a refusal answers at once, so this is generous. */
const EXIT_BOUND_MS = 15_000;

let t: TestApp;
let redis: PasswordRedis;

beforeAll(async () => {
  t = await startTestApp("refused-settings");
  redis = await startPasswordRedis(PASSWORD);
});
afterAll(async () => {
  await redis?.stop();
  await t?.close();
});

type Child = ReturnType<typeof spawnWorker>;

const fatalLines = (child: Child) =>
  child
    .output()
    .split("\n")
    .filter((line) => line.includes('"level":60'))
    .map((line) => JSON.parse(line) as { msg: string; setting: string; url: string; code: string });

const start = async (name: "worker" | "api", env: Record<string, string>) =>
  name === "worker" ? spawnWorker(t, env) : spawnApi(t, { PORT: String(await freePort()), HOST: "127.0.0.1", ...env });

describe("settings refused at start", () => {
  for (const name of ["worker", "api"] as const) {
    it(`has the ${name} exit 1 with one fatal line when Redis refuses REDIS_URL's password`, async () => {
      const child = await start(name, { REDIS_URL: redis.url(WRONG) });
      expect(await exitWithin(child, EXIT_BOUND_MS), child.output()).toEqual({ code: 1, signal: null });
      const [line, ...more] = fatalLines(child);
      expect(more).toEqual([]);
      expect(line).toMatchObject({ setting: "REDIS_URL", url: `redis://:***@127.0.0.1:${redis.port}`, code: "WRONGPASS" });
      expect(line!.msg).toBe(
        `${name}: Redis refused the connection: WRONGPASS invalid username-password pair or user is disabled. — check REDIS_URL (redis://:***@127.0.0.1:${redis.port}); exiting`,
      );
      expect(child.output()).not.toContain(WRONG);
      expect(child.output()).not.toContain('"msg":"worker started"');
    });
  }

  it("has the worker exit 1 naming NOAUTH when REDIS_URL has no password and Redis wants one", async () => {
    const child = await start("worker", { REDIS_URL: redis.url() });
    expect(await exitWithin(child, EXIT_BOUND_MS), child.output()).toEqual({ code: 1, signal: null });
    expect(fatalLines(child)).toEqual([
      expect.objectContaining({ setting: "REDIS_URL", code: "NOAUTH", msg: expect.stringContaining("NOAUTH Authentication required.") }),
    ]);
  });

  for (const name of ["worker", "api"] as const) {
    it(`has the ${name} exit 1 naming DATABASE_URL when the database does not exist or the role is unknown`, async () => {
      const missing = databaseUrl("wa_no_such_database");
      const child = await start(name, { DATABASE_URL: missing });
      expect(await exitWithin(child, EXIT_BOUND_MS), child.output()).toEqual({ code: 1, signal: null });
      expect(fatalLines(child)).toEqual([
        expect.objectContaining({
          setting: "DATABASE_URL",
          code: "3D000",
          msg: `${name}: PostgreSQL refused the connection: database "wa_no_such_database" does not exist (3D000) — check DATABASE_URL (${missing}); exiting`,
        }),
      ]);

      const unknownRole = new URL(databaseUrl("postgres"));
      unknownRole.username = "wa_nobody";
      unknownRole.password = "pg-role-pw";
      const second = await start(name, { DATABASE_URL: unknownRole.toString() });
      expect(await exitWithin(second, EXIT_BOUND_MS), second.output()).toEqual({ code: 1, signal: null });
      expect(fatalLines(second)).toEqual([
        expect.objectContaining({ setting: "DATABASE_URL", code: "28000", msg: expect.stringContaining('role "wa_nobody" does not exist (28000)') }),
      ]);
      expect(fatalLines(second)[0]!.url).toContain("wa_nobody:***@");
      expect(second.output()).not.toContain("pg-role-pw");
    });
  }

  it("has the worker and the API exit 1 naming 53300 and what to do when PostgreSQL has no connection left for them", async () => {
    // A role whose one connection is taken: as when the processes' pools (DATABASE_POOL_SIZE each)
    // have filled max_connections. It used to be "not reachable yet", and the process waited.
    const role = `wa_test_limit_${randomBytes(3).toString("hex")}`;
    const admin = postgres(TEST_ADMIN_DATABASE_URL, { max: 1, onnotice: () => {} });
    await admin.unsafe(`create role ${role} login connection limit 1`);
    const asRole = new URL(t.config.databaseUrl);
    asRole.username = role;
    const holder = postgres(asRole.toString(), { max: 1, onnotice: () => {} });
    try {
      await holder`select 1`;
      for (const name of ["worker", "api"] as const) {
        const child = await start(name, { DATABASE_URL: asRole.toString() });
        expect(await exitWithin(child, EXIT_BOUND_MS), child.output()).toEqual({ code: 1, signal: null });
        expect(fatalLines(child)).toEqual([
          expect.objectContaining({
            setting: "DATABASE_URL",
            code: "53300",
            msg:
              `${name}: PostgreSQL refused the connection: too many connections for role "${role}" (53300); run fewer processes or a smaller ` +
              "DATABASE_POOL_SIZE (each process opens up to that many connections), or raise max_connections or the role's (or database's) " +
              `CONNECTION LIMIT — check DATABASE_URL (${asRole.toString()}); exiting`,
          }),
        ]);
      }
    } finally {
      await holder.end();
      await admin.unsafe(`drop role if exists ${role}`);
      await admin.end();
    }
  }, 40_000);

  it("has a starting API that cannot reach PostgreSQL say why, and keep running", async () => {
    const nowhere = `postgres://postgres@127.0.0.1:${await freePort()}/nowhere`;
    const api = await start("api", { DATABASE_URL: nowhere });
    try {
      await waitFor("the API to say PostgreSQL is not reachable", async () => api.output().includes("PostgreSQL is not reachable yet"), 20_000);
      const line = api.output().split("\n").find((l) => l.includes("PostgreSQL is not reachable yet"))!;
      expect(JSON.parse(line).msg).toMatch(/^api: PostgreSQL is not reachable yet \(connect ECONNREFUSED 127\.0\.0\.1:\d+\); /);
      expect(api.exitCode).toBeNull();
    } finally {
      api.kill("SIGTERM");
      await exited(api);
    }
  });
});

describe("Redis refusing a running worker", () => {
  it("exits 1 with one fatal line once its password is changed and its connections drop, instead of spinning", async () => {
    const rotating = await startPasswordRedis(PASSWORD);
    const worker = spawnWorker(t, { REDIS_URL: rotating.url(PASSWORD), LOG_LEVEL: "info" });
    try {
      await waitFor("the worker to start", async () => worker.output().includes('"msg":"worker started"'), 30_000);
      // Existing connections keep their login: the refusal comes with the next reconnect.
      await rotating.admin.config("SET", "requirepass", "rotated-redis-pw");
      await rotating.admin.client("KILL", "TYPE", "normal");
      expect(await exitWithin(worker, EXIT_BOUND_MS), worker.output()).toEqual({ code: 1, signal: null });
      expect(fatalLines(worker)).toEqual([
        expect.objectContaining({ setting: "REDIS_URL", code: "WRONGPASS", msg: expect.stringContaining("jobs in flight run again once their locks expire") }),
      ]);
      expect(worker.output()).not.toContain(PASSWORD);
    } finally {
      worker.kill("SIGKILL");
      await exited(worker);
      await rotating.stop();
    }
  }, 60_000);
});
