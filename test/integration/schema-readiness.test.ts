// A process whose code is newer than its database's schema: /readyz keeps it out of rotation
// and names the command to run, and the API and a worker say so when they start; likewise
// when they start while PostgreSQL cannot be reached.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { shippedMigrations } from "../../src/db/schema-version.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { exited, spawnApi, spawnWorker, waitFor } from "../helpers/pipeline.ts";
import { freePort } from "../helpers/ports.ts";

let t: TestApp;
const shipped = shippedMigrations();
const newest = shipped.at(-1)!;
const before = shipped.at(-2)!;

beforeAll(async () => {
  t = await startTestApp("schema-readiness");
  // As if the newest migration had not run yet (its own schema change does not matter here).
  await t.deps.sql`delete from drizzle.__drizzle_migrations where created_at = ${newest.when}`;
});
afterAll(async () => {
  await t.close();
});

describe("a database behind the code", () => {
  // In this order: once a process has seen its schema current, it never asks again.
  it("answers /readyz 503 for a database nobody has migrated", async () => {
    await t.deps.sql`alter table drizzle.__drizzle_migrations rename to renamed_by_test`;
    try {
      const res = await t.app.inject({ url: "/readyz" });
      expect(res.statusCode).toBe(503);
      expect(res.json().detail).toBe(`the database has no migration; this code needs ${newest.tag}: run \`npm run migrate\``);
    } finally {
      await t.deps.sql`alter table drizzle.renamed_by_test rename to __drizzle_migrations`;
    }
  });

  for (const name of ["worker", "api"] as const) {
    it(`has a starting ${name} log the migration it needs at error level`, async () => {
      const child = name === "worker" ? spawnWorker(t) : spawnApi(t, { PORT: String(await freePort()), HOST: "127.0.0.1" });
      try {
        await waitFor(`the ${name} to name the missing migration`, async () => child.output().includes(newest.tag), 20_000);
        const line = JSON.parse(child.output().split("\n").find((l) => l.includes(newest.tag))!);
        expect(line).toMatchObject({ level: 50, msg: expect.stringContaining("run `npm run migrate`") });
      } finally {
        child.kill("SIGTERM");
        await exited(child);
      }
    });
  }

  it("answers /readyz 503 naming the migrations applied and needed, and is ready once they are", async () => {
    const behind = await t.app.inject({ url: "/readyz" });
    expect(behind.statusCode).toBe(503);
    expect(behind.headers["content-type"]).toContain("application/problem+json");
    expect(behind.json()).toMatchObject({
      status: 503,
      code: "unavailable",
      detail: `the database has migrations up to ${before.tag}; this code needs ${newest.tag}: run \`npm run migrate\``,
    });

    await t.deps.sql`insert into drizzle.__drizzle_migrations (hash, created_at) values ('restored-by-test', ${newest.when})`;
    expect((await t.app.inject({ url: "/readyz" })).statusCode).toBe(200);
  });
});

describe("a database that cannot be reached at start", () => {
  for (const name of ["worker", "api"] as const) {
    it(`has a starting ${name} say so at warn level instead of staying silent until work fails`, async () => {
      const nowhere = `postgres://postgres@127.0.0.1:${await freePort()}/nowhere`;
      const child = name === "worker" ? spawnWorker(t, { DATABASE_URL: nowhere }) : spawnApi(t, { DATABASE_URL: nowhere, PORT: String(await freePort()), HOST: "127.0.0.1" });
      try {
        await waitFor(`the ${name} to say PostgreSQL is not reachable`, async () => child.output().includes("PostgreSQL is not reachable yet"), 20_000);
        const line = JSON.parse(child.output().split("\n").find((l) => l.includes("PostgreSQL is not reachable yet"))!);
        expect(line).toMatchObject({ level: 40, msg: expect.stringMatching(new RegExp(`^${name}: `)) });
      } finally {
        child.kill("SIGTERM");
        await exited(child);
      }
    });
  }
});
