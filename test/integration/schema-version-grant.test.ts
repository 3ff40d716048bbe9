// A least-privilege deployment: migrations run as the owner, the API and workers as a role with
// rights on the service's tables only. Everything works but reading drizzle's migrations table,
// so /readyz cannot tell whether the schema is current. It stays 503, but says why, and the log
// says what to grant (once, not on every probe); the start-up line no longer says "not reachable".
import { randomBytes } from "node:crypto";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { reportDatabaseAtStart } from "../../src/db/schema-version.ts";
import { createTestDatabase } from "../helpers/db.ts";
import { TEST_ADMIN_DATABASE_URL } from "../helpers/env.ts";
import { startLoggedApp, type LoggedApp } from "../helpers/logged-app.ts";

const role = `wa_test_app_${randomBytes(4).toString("hex")}`;
const password = randomBytes(12).toString("hex");
let database: Awaited<ReturnType<typeof createTestDatabase>>;
/** The database's owner (the role `npm run migrate` ran as). */
let owner: postgres.Sql;
/** The API, connected as the role. */
let logged: LoggedApp;

function admin() {
  return postgres(TEST_ADMIN_DATABASE_URL, { max: 1, onnotice: () => {} });
}

beforeAll(async () => {
  database = await createTestDatabase("schema-version-grant");
  const cluster = admin();
  try {
    await cluster.unsafe(`create role ${role} login password '${password}'`);
  } finally {
    await cluster.end();
  }
  owner = postgres(database.url, { max: 1, onnotice: () => {} });
  // The service's tables, and nothing of drizzle's schema.
  await owner.unsafe(`grant usage on schema public to ${role};
    grant select, insert, update, delete on all tables in schema public to ${role};
    grant usage, select on all sequences in schema public to ${role}`);
  const url = new URL(database.url);
  url.username = role;
  url.password = password;
  logged = await startLoggedApp("schema-version-grant", { DATABASE_URL: url.toString(), DATABASE_POOL_SIZE: "2" }, "info");
  await logged.app.ready();
});
afterAll(async () => {
  await logged?.close();
  await owner?.end();
  await database?.drop();
  const cluster = admin();
  try {
    await cluster.unsafe(`drop role if exists ${role}`);
  } finally {
    await cluster.end();
  }
});

type LogLine = { level: number; msg: string };
/** The lines logged, but for the one per request. */
const parsed = (lines: readonly string[]): LogLine[] =>
  lines.map((line) => JSON.parse(line) as LogLine).filter((line) => line.msg !== "request");
const GRANT = `GRANT USAGE ON SCHEMA drizzle TO "${role}"; GRANT SELECT ON drizzle.__drizzle_migrations TO "${role}";`;

describe("a role that may not read drizzle's migrations table", () => {
  it("has the process say so at start, with the grant, not that PostgreSQL is not reachable", async () => {
    const from = logged.lines.length;
    await reportDatabaseAtStart(logged.deps.sql, logged.deps.logger, "api", "requests are answered 503 until it is");
    const [line, ...more] = parsed(logged.lines.slice(from));
    expect(more).toEqual([]);
    expect(line!.level).toBe(50);
    expect(line!.msg).not.toContain("not reachable");
    expect(line!.msg).toContain("api: PostgreSQL refused to show the schema version to DATABASE_URL's role (permission denied for schema drizzle (42501))");
    expect(line!.msg).toContain(GRANT);
    expect(line!.msg).toContain("/readyz answers 503");
  });

  it("answers /readyz 503 naming the missing right, and logs the grant once, however often it is asked", async () => {
    // The role serves the service's own tables.
    expect(await logged.deps.sql`select count(*)::int as n from tracked_wallets`).toEqual([{ n: 0 }]);
    const from = logged.lines.length;
    for (let i = 0; i < 5; i++) {
      const res = await logged.app.inject({ url: "/readyz" });
      expect(res.statusCode).toBe(503);
      expect(res.headers["retry-after"]).toBe("30");
      expect(res.json()).toMatchObject({
        code: "unavailable",
        detail: "PostgreSQL refused to show the schema version: DATABASE_URL's role needs SELECT on drizzle.__drizzle_migrations (see the log)",
      });
      // Without credentials: the role's name is for the log only.
      expect(res.body).not.toContain(role);
    }
    const lines = parsed(logged.lines.slice(from));
    expect(lines, JSON.stringify(lines)).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 50, msg: expect.stringContaining("readiness: PostgreSQL refused to show the schema version") });
    expect(lines[0]!.msg).toContain("(permission denied for schema drizzle (42501))");
    expect(lines[0]!.msg).toContain(GRANT);
  });

  it("is ready once the owner runs the grant the log gave, and says the version can be read again", async () => {
    const refusal = parsed(logged.lines).find((line) => line.msg.startsWith("readiness: PostgreSQL refused to show the schema version"));
    const statements = refusal!.msg.match(/GRANT [^;]+;/g)!;
    expect(statements).toHaveLength(2);
    for (const statement of statements) await owner.unsafe(statement);
    const from = logged.lines.length;
    const res = await logged.app.inject({ url: "/readyz" });
    expect(res.statusCode, res.body).toBe(200);
    expect(parsed(logged.lines.slice(from))).toEqual([expect.objectContaining({ level: 30, msg: "readiness: the schema version can be read again" })]);
  });
});
