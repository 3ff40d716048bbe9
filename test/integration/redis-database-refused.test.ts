// A REDIS_URL whose database number Redis refuses (past its `databases`) is a refused setting,
// as a wrong password is: the API and a worker exit 1 with one fatal line naming REDIS_URL, and
// `npm run queues` exits 1 saying so. ioredis sends SELECT <n> as it connects; when Redis refused
// it, ioredis only emitted an 'error' and went ready on database 0: the API served, its /readyz
// said ready, and a worker wrote its queues into database 0, where another deployment's may be.
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testEnv } from "../helpers/app.ts";
import { createTestDatabase, uniqueQueuePrefix } from "../helpers/db.ts";
import { TEST_REDIS_URL } from "../helpers/env.ts";
import { exitWithin } from "../helpers/pipeline.ts";
import { freePort } from "../helpers/ports.ts";
import { deletePrefixKeysAt, prefixKeys } from "../helpers/redis-keys.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
/** Start-up (tsx, on two shared cores that other test runs may load heavily); the refusal itself answers at once. */
const EXIT_BOUND_MS = 60_000;
const prefix = uniqueQueuePrefix("redis-database-refused");
let database: Awaited<ReturnType<typeof createTestDatabase>>;
let refusedUrl: string;
let databases: number;

beforeAll(async () => {
  database = await createTestDatabase("redis-database-refused");
  const admin = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 1 });
  try {
    const [, count] = (await admin.config("GET", "databases")) as [string, string];
    databases = Number(count);
  } finally {
    admin.disconnect();
  }
  const url = new URL(TEST_REDIS_URL);
  url.pathname = `/${databases}`;
  refusedUrl = url.toString();
});
afterAll(async () => {
  await deletePrefixKeysAt(TEST_REDIS_URL, prefix);
  await database?.drop();
});

function start(script: string, env: Record<string, string>): ChildProcess & { output: () => string } {
  let output = "";
  const child = spawn(process.execPath, ["--import", "tsx", script], {
    cwd: ROOT,
    env: { ...process.env, ...testEnv({ DATABASE_URL: database.url, QUEUE_PREFIX: prefix, LOG_LEVEL: "warn", ...env }) },
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  return Object.assign(child, { output: () => output });
}

const fatalLines = (output: string) =>
  output
    .split("\n")
    .filter((line) => line.includes('"level":60'))
    .map((line) => JSON.parse(line) as { msg: string; setting: string; url: string; code: string });

describe("a REDIS_URL whose database Redis refuses", { timeout: EXIT_BOUND_MS + 30_000 }, () => {
  const cases: Array<[label: string, name: "api" | "worker", script: string, extra: () => Promise<Record<string, string>>]> = [
    ["the API", "api", "src/bin/api.ts", async () => ({ PORT: String(await freePort()), HOST: "127.0.0.1" })],
    ["a worker", "worker", "src/bin/worker.ts", async () => ({})],
    // With its metrics port, the worker listens before its check: the refusal has come by then.
    [
      "a worker with WORKER_METRICS_PORT",
      "worker",
      "src/bin/worker.ts",
      async () => ({ WORKER_METRICS_PORT: String(await freePort()), HOST: "127.0.0.1", ADMIN_USER: "ops", ADMIN_PASSWORD: "an-admin-password-long-enough" }),
    ],
  ];

  for (const [label, name, script, extra] of cases) {
    it(`has ${label} exit 1 with one fatal line naming REDIS_URL`, async () => {
      const child = start(script, { REDIS_URL: refusedUrl, ...(await extra()) });
      expect(await exitWithin(child, EXIT_BOUND_MS), child.output()).toEqual({ code: 1, signal: null });
      const [line, ...more] = fatalLines(child.output());
      expect(more).toEqual([]);
      expect(line).toMatchObject({ setting: "REDIS_URL", url: refusedUrl, code: "ERR" });
      expect(line!.msg).toBe(
        `${name}: Redis refused the connection: ERR DB index is out of range (REDIS_URL asks for database ${databases}, past the server's ` +
          `\`databases\` setting: 16 by default, numbered 0 to 15) — check REDIS_URL (${refusedUrl}); exiting`,
      );
      expect(child.output()).not.toContain("worker started");
    });
  }

  it("leaves nothing of theirs in database 0", async () => {
    const zero = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 1 });
    try {
      expect(await prefixKeys(zero, prefix)).toEqual([]);
    } finally {
      zero.disconnect();
    }
  });

  it("has npm run queues exit 1 saying Redis refused the database, instead of counting database 0's jobs", async () => {
    const child = start("src/bin/queues.ts", { REDIS_URL: refusedUrl });
    expect(await exitWithin(child, EXIT_BOUND_MS), child.output()).toEqual({ code: 1, signal: null });
    expect(child.output()).toContain(`Redis at ${refusedUrl} refused REDIS_URL's database: ERR DB index is out of range (REDIS_URL asks for database ${databases}`);
    // Refused, not unreachable: the wording sent an operator to the network first.
    expect(child.output()).not.toContain("cannot be reached");
    expect(child.output()).not.toContain("waiting");
  });
});
