// A Redis full at maxmemory under the noeviction policy the README requires still answers PING,
// and refuses every write ("OOM command not allowed …"): every enqueue fails, so the API answers
// ingests 503. In an operator's review /readyz said ready meanwhile (27 of 30 ingests answered
// 503), and a load balancer kept the process in rotation. Readiness asks Redis with a write.
// Against a real redis-server of the test's own, filled past its maxmemory.
import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startLoggedApp, type LoggedApp } from "../helpers/logged-app.ts";
import { startOwnRedis, type OwnRedis } from "../helpers/redis-server.ts";

const FILL = "{readiness-redis-full-fill}:";

let redis: OwnRedis;
let admin: Redis;
let logged: LoggedApp;

beforeAll(async () => {
  redis = await startOwnRedis({ args: ["--maxmemory-policy", "noeviction"] });
  ({ admin } = redis);
  logged = await startLoggedApp("readiness-redis-full", { REDIS_URL: redis.url() }, "info");
  await logged.app.ready();
}, 30_000);

afterAll(async () => {
  await admin?.config("SET", "maxmemory", "0").catch(() => {});
  await logged?.close();
  await redis?.stop();
});

/**
 * Puts Redis past its maxmemory, as a Redis that filled up with jobs is: it then refuses every
 * write, however small. (Filled only up to the limit it would take a small write and refuse a
 * larger one, as its memory moves around the limit.)
 */
async function fillRedis(): Promise<void> {
  const chunk = "x".repeat(64 * 1024);
  for (let i = 0; i < 16; i++) await admin.set(`${FILL}${i}`, chunk);
  const used = Number(/used_memory:(\d+)/.exec(await admin.info("memory"))![1]);
  await admin.config("SET", "maxmemory", String(used - 256 * 1024));
  await expect(admin.set(`${FILL}small`, "1")).rejects.toThrow(/^OOM command not allowed/);
}

type LogLine = { level: number; msg: string; code?: string; cause?: string };
const linesFrom = (from: number): LogLine[] => logged.lines.slice(from).map((line) => JSON.parse(line) as LogLine);
const readyz = () => logged.app.inject({ url: "/readyz" });

describe("readiness while Redis refuses writes", () => {
  it("answers /readyz 503 while Redis is full at maxmemory though it answers PING, says so once in the log, and is ready again once Redis takes writes", async () => {
    expect((await readyz()).statusCode).toBe(200);
    const from = logged.lines.length;
    await fillRedis();
    try {
      expect(await admin.ping()).toBe("PONG");
      for (let i = 0; i < 5; i++) {
        const res = await readyz();
        expect(res.statusCode, res.body).toBe(503);
        expect(res.json()).toMatchObject({ code: "unavailable", detail: "Redis refuses writes: full at maxmemory (see the log)" });
        expect(res.headers["retry-after"]).toBe("5");
      }
    } finally {
      await admin.config("SET", "maxmemory", "0");
    }
    const back = await readyz();
    expect(back.statusCode, back.body).toBe(200);

    const lines = linesFrom(from);
    const refused = lines.filter((line) => line.msg.startsWith("readiness: Redis refuses writes"));
    // Once for the five probes: a load balancer asks every few seconds.
    expect(refused, JSON.stringify(lines)).toHaveLength(1);
    expect(refused[0]).toMatchObject({ level: 40, code: "OOM" });
    expect(refused[0]!.cause).toMatch(/^OOM command not allowed/);
    expect(lines.filter((line) => line.msg === "readiness: Redis takes writes again")).toHaveLength(1);
  });
});
