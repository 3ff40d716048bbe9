// npm run demo as a newcomer runs it: a real process that starts the API and the worker as
// children. Every condition must be delivered on every channel, the operator's password must
// stay out of its output, and Ctrl-C stops it all. It runs on DEMO_DATABASE_URL, DEMO_REDIS_URL,
// DEMO_PORT and DEMO_QUEUE_PREFIX, on a host where the service's own DATABASE_URL, REDIS_URL,
// PORT and QUEUE_PREFIX are exported too, and touches none of those: it used to migrate and seed
// the service's database, and start a worker on it.
import { spawn, type ChildProcess } from "node:child_process";
import { createServer, type Server } from "node:net";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, uniqueQueuePrefix } from "../helpers/db.ts";
import { TEST_REDIS_URL } from "../helpers/env.ts";
import { freePort } from "../helpers/ports.ts";
import { Redis } from "ioredis";
import { deletePrefixKeysAt, prefixKeys } from "../helpers/redis-keys.ts";

const CONDITIONS = ["large_transfer", "suspicious_counterparty", "risk_score_increase", "unusual_activity"];
const ADMIN_PASSWORD = "operator-chosen-pw-7Qx2";
let database: Awaited<ReturnType<typeof createTestDatabase>>;
/** The service's database, exported in the same shell: the demo must leave it alone. */
let serviceDatabase: Awaited<ReturnType<typeof createTestDatabase>>;
const prefix = uniqueQueuePrefix("demo");
const servicePrefix = uniqueQueuePrefix("demo-service");
/** The service's port, taken: a demo that listened there would fail. */
let servicePort: Server;
let demo: ChildProcess;
let output = "";
let exited: Promise<number | null>;

beforeAll(async () => {
  database = await createTestDatabase("demo");
  serviceDatabase = await createTestDatabase("demo-service");
  servicePort = createServer();
  await new Promise<void>((resolve) => servicePort.listen(0, "127.0.0.1", resolve));
  demo = spawn(process.execPath, ["--import", "tsx", "src/bin/demo.ts"], {
    env: {
      ...process.env,
      DEMO_DATABASE_URL: database.url,
      DEMO_REDIS_URL: TEST_REDIS_URL,
      DEMO_PORT: String(await freePort()),
      DEMO_QUEUE_PREFIX: prefix,
      DATABASE_URL: serviceDatabase.url,
      // Nothing listens there: a demo (or a child) that used it would not get far.
      REDIS_URL: `redis://127.0.0.1:${await freePort()}`,
      PORT: String((servicePort.address() as { port: number }).port),
      QUEUE_PREFIX: servicePrefix,
      // The API then refuses tokens without this issuer and audience: the demo's must carry them.
      JWT_ISSUER: "https://issuer.demo.test/",
      JWT_AUDIENCE: "wallet-alerts-demo",
      ADMIN_PASSWORD,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  demo.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  demo.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  exited = new Promise((resolve) => demo.on("exit", (code) => resolve(code)));
});
afterAll(async () => {
  // Only when a test failed before the SIGINT: nothing may outlive the file.
  if (demo.exitCode === null && demo.signalCode === null) {
    demo.kill("SIGINT");
    await exited;
  }
  await deletePrefixKeysAt(TEST_REDIS_URL, prefix);
  await deletePrefixKeysAt(TEST_REDIS_URL, servicePrefix);
  await new Promise((resolve) => servicePort.close(resolve));
  await database.drop();
  await serviceDatabase.drop();
});

const waitUntil = async (done: () => boolean, timeoutMs: number) => {
  const deadline = Date.now() + timeoutMs;
  while (!done() && Date.now() < deadline && demo.exitCode === null) await new Promise((r) => setTimeout(r, 250));
};
const childPids = () => [...output.matchAll(/started (?:api|worker) \(pid (\d+)\)/g)].map((match) => Number(match[1]));
const running = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe("npm run demo", () => {
  it("delivers every condition by webhook (signature verified), email and SMS to a caller whose token carries the issuer and audience the API checks", async () => {
    const delivered = (channel: string, condition: string) =>
      channel === "webhook"
        ? new RegExp(`webhook delivered → sink \\(signature verified.*\\[${condition}\\]`).test(output)
        : new RegExp(`${channel}\\s+delivered → .*\\[${condition}\\]`).test(output);
    const all = () => CONDITIONS.every((c) => ["webhook", "email", "sms"].every((ch) => delivered(ch, c)));
    await waitUntil(all, 60_000);
    for (const condition of CONDITIONS) {
      for (const channel of ["webhook", "email", "sms"]) expect(delivered(channel, condition), `${channel} ${condition}\n${output}`).toBe(true);
    }
    expect(output).not.toMatch(/SIGNATURE NOT VERIFIED|FAILED/);
    expect(output).toMatch(/TOKEN=ey/);
  }, 90_000);

  it("never prints the ADMIN_PASSWORD it was given: the banner says where the password comes from", () => {
    expect(output).toContain("/admin/queues   (user admin, password from ADMIN_PASSWORD)");
    expect(output).not.toContain(ADMIN_PASSWORD);
  });

  it("leaves the service's database and queue prefix alone", async () => {
    const sql = postgres(serviceDatabase.url, { max: 1, onnotice: () => {} });
    try {
      expect(await sql`select owner from tracked_wallets`).toEqual([]);
      expect(await sql`select id from alerts`).toEqual([]);
    } finally {
      await sql.end();
    }
    const demoSql = postgres(database.url, { max: 1, onnotice: () => {} });
    try {
      expect(await demoSql`select distinct owner from tracked_wallets`).toEqual([{ owner: "demo" }]);
    } finally {
      await demoSql.end();
    }
    const redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 1 });
    try {
      expect(await prefixKeys(redis, servicePrefix)).toEqual([]);
      expect((await prefixKeys(redis, prefix, 1)).length).toBe(1);
    } finally {
      redis.disconnect();
    }
  });

  it("stops the API and the worker on SIGINT and exits 0", async () => {
    const pids = childPids();
    expect(pids).toHaveLength(2);
    demo.kill("SIGINT");
    expect(await exited).toBe(0);
    for (const pid of pids) expect(running(pid), `pid ${pid}`).toBe(false);
  }, 60_000);
});
