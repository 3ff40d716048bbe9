// npm run migrate as an operator runs it: exit 0 with "migrations applied", or exit 1 with one
// fatal line saying why (pino JSON on stdout, as every line of the services), within a bound, whatever the PostgreSQL at DATABASE_URL does. A server that
// takes the connection and hangs up before it is ready (what a host that drops packets looked
// like from here: something on the way accepted and closed) kept postgres.js reconnecting
// forever with the migration's first statement queued: the command never ended and said nothing.
import { spawn } from "node:child_process";
import { createServer, type Server, type Socket } from "node:net";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { createTestDatabase } from "../helpers/db.ts";
import { exitWithin } from "../helpers/pipeline.ts";
import { freePort } from "../helpers/ports.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
/** Start-up (tsx, on two shared cores) plus the 5 s bound on PostgreSQL's answer, generously. */
const EXIT_BOUND_MS = 30_000;
const PASSWORD = "pg-secret-pw";

const servers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of servers.splice(0)) await close();
});

type Outcome = { exit: { code: number | null; signal: NodeJS.Signals | null } | "still running"; stdout: string; stderr: string; ms: number };

/** npm run migrate on `databaseUrl`; killed (and "still running") past the bound. */
async function migrate(databaseUrl: string): Promise<Outcome> {
  const started = Date.now();
  const child = spawn(process.execPath, ["--import", "tsx", "src/bin/migrate.ts"], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: databaseUrl },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const exit = await exitWithin(child, EXIT_BOUND_MS);
  return { exit, stdout, stderr, ms: Date.now() - started };
}

/** A "PostgreSQL" on loopback that does `onConnection` with every connection it takes. */
async function fakePostgres(onConnection: (socket: Socket) => void): Promise<{ port: number; connections: () => number }> {
  const sockets = new Set<Socket>();
  let connections = 0;
  const server: Server = createServer((socket) => {
    connections++;
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
    socket.on("error", () => {});
    onConnection(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  servers.push(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return { port: (server.address() as AddressInfo).port, connections: () => connections };
}

/** The command's lines as (level, role, msg): JSON, every one of them, and nothing on stderr. */
function lines(outcome: Outcome): Array<{ level: number; role: string; msg: string }> {
  expect(outcome.stderr).toBe("");
  return outcome.stdout
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => {
      const { level, role, msg } = JSON.parse(line) as { level: number; role: string; msg: string };
      return { level, role, msg };
    });
}

const fatal = (msg: string) => ({ level: 60, role: "migrate", msg });

const urlOn = (port: number) => `postgres://postgres:${PASSWORD}@127.0.0.1:${port}/wallet_alerts`;
const shownUrl = (port: number) => `postgres://postgres:***@127.0.0.1:${port}/wallet_alerts`;

describe("npm run migrate against a PostgreSQL that does not answer", () => {
  it("exits 1 with one line within the bound when the server takes each connection and hangs up before it is ready", async () => {
    // Reads the start-up message and closes: postgres.js connects again at once, every time.
    const peer = await fakePostgres((socket) => socket.once("data", () => socket.end()));
    const outcome = await migrate(urlOn(peer.port));
    expect(outcome.exit, outcome.stdout).toEqual({ code: 1, signal: null });
    expect(lines(outcome)).toEqual([fatal(`migration failed: PostgreSQL at ${shownUrl(peer.port)} did not answer within 5 s`)]);
    expect(peer.connections()).toBeGreaterThan(1);
  }, EXIT_BOUND_MS + 10_000);

  it("exits 1 with the same line when the server takes the connection and never answers (a hung one)", async () => {
    const peer = await fakePostgres(() => {});
    const outcome = await migrate(urlOn(peer.port));
    expect(outcome.exit, outcome.stdout).toEqual({ code: 1, signal: null });
    expect(lines(outcome)).toEqual([fatal(`migration failed: PostgreSQL at ${shownUrl(peer.port)} did not answer within 5 s`)]);
    expect(outcome.stderr + outcome.stdout).not.toContain(PASSWORD);
  }, EXIT_BOUND_MS + 10_000);
});

describe("npm run migrate against a PostgreSQL that answers", () => {
  it("exits 1 at once, saying it cannot be reached, when the port refuses connections", async () => {
    const port = await freePort();
    const outcome = await migrate(urlOn(port));
    expect(outcome.exit, outcome.stdout).toEqual({ code: 1, signal: null });
    expect(lines(outcome)).toEqual([fatal(`migration failed: PostgreSQL at ${shownUrl(port)} cannot be reached (connect ECONNREFUSED 127.0.0.1:${port})`)]);
  }, EXIT_BOUND_MS + 10_000);

  it("applies every migration to an empty database and exits 0", async () => {
    const database = await createTestDatabase("migrate-cli-empty", { empty: true });
    try {
      const outcome = await migrate(database.url);
      expect(outcome.exit, outcome.stderr).toEqual({ code: 0, signal: null });
      expect(lines(outcome)).toEqual([{ level: 30, role: "migrate", msg: "migrations applied" }]);
    } finally {
      await database.drop();
    }
  }, EXIT_BOUND_MS + 10_000);
});
