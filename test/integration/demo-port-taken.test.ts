// `npm run demo` on a port another server already has (docker compose's API on 3000, a
// development server): it says so plainly, naming the port and DEMO_PORT, and does nothing else:
// no database created, no child started, not one request to that server. It used to start its
// API (which died on EADDRINUSE unheard), take the other server's /readyz for its own, and report
// that server's 401 to its first seeding request: "POST /v1/wallets → 401: the token is not valid".
import { randomBytes } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { uniqueQueuePrefix } from "../helpers/db.ts";
import { databaseUrl, TEST_ADMIN_DATABASE_URL, TEST_REDIS_URL } from "../helpers/env.ts";
import { deletePrefixKeysAt } from "../helpers/redis-keys.ts";
import { runDemoToExit } from "../helpers/demo-refusal.ts";

/** Start-up (tsx, on two shared cores); the refusal itself comes before anything else. */
const EXIT_BOUND_MS = 60_000;
// A database that does not exist: the demo would create it, were it to go on.
const DATABASE = `wa_test_demo_port_${randomBytes(4).toString("hex")}`;
const prefix = uniqueQueuePrefix("demo-port-taken");
const requests: string[] = [];
let server: Server;
let neighbour: Server;
let port: number;

beforeAll(async () => {
  // As compose's API answers: /readyz ready, anything else 401 without its token.
  server = createServer((request, response) => {
    requests.push(`${request.method} ${request.url}`);
    const ready = request.url === "/readyz";
    response.writeHead(ready ? 200 : 401, { "content-type": "application/json" });
    response.end(JSON.stringify(ready ? { status: "ready", postgres: "up", redis: "up" } : { detail: "the token is not valid" }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
  // The next port taken too (by this test, or already by another program: taken either way).
  neighbour = createServer();
  await new Promise<void>((resolve) => {
    neighbour.once("error", () => resolve());
    neighbour.listen(port + 1, "127.0.0.1", resolve);
  });
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  if (neighbour.listening) await new Promise((resolve) => neighbour.close(resolve));
  await deletePrefixKeysAt(TEST_REDIS_URL, prefix);
  const admin = postgres(TEST_ADMIN_DATABASE_URL, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`drop database if exists ${DATABASE} with (force)`);
  } finally {
    await admin.end();
  }
});

describe("npm run demo on a port that another server has", () => {
  it("exits 1 with one line naming the port and DEMO_PORT (and a port that was free, not merely the next), before it creates, starts or asks anything", { timeout: EXIT_BOUND_MS + 30_000 }, async () => {
    const settings = { url: databaseUrl(DATABASE), port: String(port) };
    const { exit, stdout, stderr } = await runDemoToExit({ databaseUrl: settings.url, port: settings.port, queuePrefix: prefix }, EXIT_BOUND_MS);
    expect(exit, stdout + stderr).toEqual({ code: 1, signal: null });
    const offered = /^demo failed: port (\d+) is in use: another program listens there \(an earlier demo, docker compose's API, a development server\)\. (?:Stop it, or give the demo another port with DEMO_PORT, e\.g\. DEMO_PORT=(\d+) npm run demo \(free when checked\)|Stop it, or give the demo a free port with DEMO_PORT)\n$/.exec(stderr);
    expect(offered, stderr).not.toBeNull();
    expect(Number(offered![1])).toBe(port);
    // Not the next number, which another server holds too: a port that was free when asked, or none.
    if (offered![2] !== undefined) expect(Number(offered![2])).toBeGreaterThan(port + 1);
    expect(stdout).toBe("");
    expect(requests).toEqual([]);
    const admin = postgres(TEST_ADMIN_DATABASE_URL, { max: 1, onnotice: () => {} });
    try {
      expect(await admin`select 1 from pg_database where datname = ${DATABASE}`).toHaveLength(0);
    } finally {
      await admin.end();
    }
  });
});
