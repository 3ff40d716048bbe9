// A PostgreSQL whose autovacuum does not run fails nothing and fills the disk (README,
// Monitoring: PostgreSQL without autovacuum), so the API and the worker say so when they start,
// and the API's /metrics serves it (wallet_alerts_postgres_autovacuum_off). Real processes
// against the real server: what they say is held against the server's actual setting (which a
// test cannot change: autovacuum is server-wide), and against a database of the test's own with
// track_counts set off, which stops autovacuum as surely and can be set per database. Which
// settings make which line: test/unit/autovacuum.test.ts.
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { createTestDatabase } from "../helpers/db.ts";
import { TEST_ADMIN_DATABASE_URL } from "../helpers/env.ts";
import { exited, spawnApi, spawnWorker, waitFor } from "../helpers/pipeline.ts";
import { freePort } from "../helpers/ports.ts";

const ADMIN = { ADMIN_USER: "ops", ADMIN_PASSWORD: "correct-horse-battery" };
const AUTHORIZATION = `Basic ${Buffer.from(`${ADMIN.ADMIN_USER}:${ADMIN.ADMIN_PASSWORD}`).toString("base64")}`;
const GAUGE = "wallet_alerts_postgres_autovacuum_off";
const START_BOUND_MS = 30_000;

type Child = ReturnType<typeof spawnWorker>;
type LogLine = { level: number; msg: string; postgresSettings?: Record<string, string> };

let t: TestApp;
/** A database of this file's whose sessions run with track_counts = off. */
let countsOff: Awaited<ReturnType<typeof createTestDatabase>>;
/** The server's own settings, read from pg_settings by a session of the test's. */
let server: { autovacuum: string; track_counts: string };

beforeAll(async () => {
  t = await startTestApp("autovacuum-warning");
  countsOff = await createTestDatabase("autovacuum-warning-counts-off");
  const admin = postgres(TEST_ADMIN_DATABASE_URL, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`alter database ${countsOff.name} set track_counts = off`);
    const rows = await admin<{ name: string; setting: string }[]>`select name, setting from pg_settings where name in ('autovacuum', 'track_counts')`;
    server = Object.fromEntries(rows.map((row) => [row.name, row.setting])) as typeof server;
  } finally {
    await admin.end();
  }
}, 30_000);
afterAll(async () => {
  await t?.close();
  await countsOff?.drop();
});

/** The API or a worker as a process of its own, at debug so that "autovacuum runs" is said too. */
async function start(kind: "api" | "worker", env: Record<string, string>): Promise<{ child: Child; port?: number }> {
  if (kind === "worker") return { child: spawnWorker(t, { ...ADMIN, LOG_LEVEL: "debug", ...env }) };
  const port = await freePort();
  return { child: spawnApi(t, { ...ADMIN, LOG_LEVEL: "debug", PORT: String(port), HOST: "127.0.0.1", ...env }), port };
}

const lines = (child: Child): LogLine[] =>
  child
    .output()
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as LogLine);

/** The process's one line about autovacuum (whichever it is), once it has said it. */
async function autovacuumLine(kind: string, child: Child): Promise<LogLine> {
  const said = await waitFor(
    `the ${kind} to say whether autovacuum runs`,
    async () => {
      if (child.exitCode !== null) throw new Error(`the ${kind} exited: ${child.output()}`);
      const found = lines(child).filter((line) => /PostgreSQL runs with|PostgreSQL's autovacuum runs/.test(line.msg));
      return found.length > 0 && found;
    },
    START_BOUND_MS,
  );
  expect(said, child.output()).toHaveLength(1);
  return said[0]!;
}

async function scrapeGauge(port: number): Promise<string[]> {
  const body = await waitFor(
    "the API to serve /metrics",
    async () => {
      const res = await fetch(`http://127.0.0.1:${port}/metrics`, { headers: { authorization: AUTHORIZATION } }).catch(() => null);
      return res?.status === 200 && res.text();
    },
    START_BOUND_MS,
  );
  return body.split("\n").filter((line) => line.startsWith(`${GAUGE} `));
}

async function stop(child: Child): Promise<void> {
  if (child.exitCode === null) child.kill("SIGTERM");
  await exited(child);
}

describe("a process starting on a PostgreSQL whose autovacuum is on or off", () => {
  for (const kind of ["api", "worker"] as const) {
    it(`has the ${kind} warn, naming the setting, exactly when the server's own settings keep autovacuum from running`, async () => {
      const runs = server.autovacuum === "on" && server.track_counts === "on";
      const { child } = await start(kind, {});
      try {
        const line = await autovacuumLine(kind, child);
        expect(line.postgresSettings).toEqual({ autovacuum: server.autovacuum, track_counts: server.track_counts });
        if (runs) {
          expect(line).toMatchObject({ level: 20, msg: `${kind}: PostgreSQL's autovacuum runs` });
        } else {
          expect(line.level).toBe(40);
          expect(line.msg).toMatch(new RegExp(`^${kind}: PostgreSQL runs with (autovacuum|track_counts) = off`));
          expect(line.msg).toContain("grows without bound");
        }
      } finally {
        await stop(child);
      }
    });
  }

  it("has the API's /metrics report the server's own settings: 1 when they keep autovacuum from running, else 0", async () => {
    const runs = server.autovacuum === "on" && server.track_counts === "on";
    const { child, port } = await start("api", {});
    try {
      expect(await scrapeGauge(port!), child.output()).toEqual([`${GAUGE} ${runs ? 0 : 1}`]);
    } finally {
      await stop(child);
    }
  });
});

describe("a process starting on a database whose sessions run with track_counts = off", () => {
  for (const kind of ["api", "worker"] as const) {
    it(`has the ${kind} warn that autovacuum cannot run there, naming track_counts and how to turn it back on`, async () => {
      const { child } = await start(kind, { DATABASE_URL: countsOff.url });
      try {
        const line = await autovacuumLine(kind, child);
        expect(line.level).toBe(40);
        expect(line.postgresSettings).toEqual({ autovacuum: server.autovacuum, track_counts: "off" });
        expect(line.msg).toMatch(new RegExp(`^${kind}: PostgreSQL runs with .*track_counts = off`));
        expect(line.msg).toContain("set track_counts = on");
      } finally {
        await stop(child);
      }
    });
  }

  it("has the API's /metrics report 1 whatever the server's autovacuum", async () => {
    const { child, port } = await start("api", { DATABASE_URL: countsOff.url });
    try {
      expect(await scrapeGauge(port!), child.output()).toEqual([`${GAUGE} 1`]);
    } finally {
      await stop(child);
    }
  });
});

describe("a process starting while PostgreSQL cannot be read", () => {
  for (const kind of ["api", "worker"] as const) {
    it(`has the ${kind} go on without the autovacuum settings, say so at debug, and stop gracefully`, async () => {
      const nowhere = `postgres://postgres@127.0.0.1:${await freePort()}/nowhere`;
      const { child } = await start(kind, { DATABASE_URL: nowhere });
      try {
        await waitFor(
          `the ${kind} to give up reading the autovacuum settings`,
          async () => child.exitCode !== null || lines(child).some((line) => line.msg.startsWith(`${kind}: could not read PostgreSQL's autovacuum settings at start`)),
          START_BOUND_MS,
        );
        expect(child.exitCode, child.output()).toBeNull();
        expect(lines(child).filter((line) => line.level >= 50), child.output()).toEqual([]);
      } finally {
        child.kill("SIGTERM");
      }
      expect(await exited(child), child.output()).toEqual({ code: 0, signal: null });
    });
  }
});
