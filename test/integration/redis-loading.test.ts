// A Redis that is loading its dataset (restarted with the append-only file on, as the README
// recommends) answers every command "LOADING Redis is loading the dataset in memory" until it
// is done: an outage like any other. The API answers 503 with Retry-After, not 500.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { expectProblem, makeTransaction, bearer } from "../helpers/seed.ts";
import { plainAnswer, startScriptedRedis, type ScriptedRedis } from "../helpers/scripted-redis.ts";

const INFO = "# Server\r\nredis_version:7.2.4\r\nloading:0\r\n";
let redis: ScriptedRedis;
let t: TestApp;
let loading = false;

beforeAll(async () => {
  redis = await startScriptedRedis((command) => {
    if (command[0] === "INFO") return `$${Buffer.byteLength(INFO)}\r\n${INFO}\r\n`;
    if (loading && command[0] !== "PING") return "-LOADING Redis is loading the dataset in memory\r\n";
    // The test app's cleanup scans its prefix: no keys here.
    if (command[0] === "SCAN") return "*2\r\n$1\r\n0\r\n*0\r\n";
    return command[0] === "PING" || command[0] === "CLIENT" || command[0] === "SELECT" ? plainAnswer(command) : "+OK\r\n";
  });
  t = await startTestApp("redis-loading", { REDIS_URL: redis.url });
});
afterAll(async () => {
  // Loaded by now: the app's close (its queues, its cleanup) talks to this Redis too.
  loading = false;
  await t?.close();
  await redis?.close();
});

describe("a Redis loading its dataset", () => {
  it("makes ingest answer 503 with Retry-After, as an outage, never 500", async () => {
    loading = true;
    const token = await t.token("ingestor", "ingest:write");
    const res = await t.app.inject({ method: "POST", url: "/v1/ingest/transactions", headers: bearer(token), payload: { transactions: [makeTransaction()] } });
    expectProblem(res, 503, "unavailable");
    expect(res.headers["retry-after"]).toBeDefined();
  });
});
