// A REDIS_URL that leads to a node of a Redis Cluster: the standalone client cannot follow the
// node's MOVED (or ASK) to the node that holds our keys' slot, and Redis Cluster is not supported.
// The API and a worker stop at start with one fatal line naming REDIS_URL; the worker used to log
// the MOVED error, then "worker started" with jobs that could never run, and the API served with
// a /readyz that said Redis could not be reached.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { exitWithin, spawnApi, spawnWorker } from "../helpers/pipeline.ts";
import { freePort } from "../helpers/ports.ts";
import { bulkInfo, jsonLogLines, plainAnswer, startScriptedRedis, type ScriptedRedis } from "../helpers/scripted-redis.ts";

/** Start-up (tsx, on two shared cores) plus the start-up check, which answers at once here. */
const EXIT_BOUND_MS = 30_000;
const REDIRECT = "MOVED 1663 127.0.0.1:4645";
const INFO = "# Server\r\nredis_version:7.2.4\r\nmaxmemory_policy:noeviction\r\n# Cluster\r\ncluster_enabled:1\r\n";

let t: TestApp;
let node: ScriptedRedis;

beforeAll(async () => {
  t = await startTestApp("redis-cluster-refused");
  // A cluster node that holds none of our keys: PING and the handshake as any Redis, MOVED for a key.
  node = await startScriptedRedis((command) => {
    if (command[0] === "INFO") return bulkInfo(INFO);
    if (command.length > 1 && !["CLIENT", "SELECT", "INFO", "PING"].includes(command[0]!)) return `-${REDIRECT}\r\n`;
    return plainAnswer(command);
  });
});
afterAll(async () => {
  await node?.close();
  await t?.close();
});

type LogLine = { level: number; msg: string; setting?: string; url?: string; code?: string };

describe("a REDIS_URL that leads to a Redis Cluster node", () => {
  const cases = [
    ["the API", "api", async () => spawnApi(t, { REDIS_URL: node.url, PORT: String(await freePort()), HOST: "127.0.0.1" })],
    ["a worker", "worker", async () => spawnWorker(t, { REDIS_URL: node.url })],
  ] as const;

  for (const [label, who, start] of cases) {
    it(`has ${label} exit 1 with one fatal line naming REDIS_URL and saying Redis Cluster is not supported`, async () => {
      const child = await start();
      expect(await exitWithin(child, EXIT_BOUND_MS), child.output()).toEqual({ code: 1, signal: null });
      const fatal = jsonLogLines<LogLine>(child.output()).filter((line) => line.level === 60);
      expect(fatal).toEqual([expect.objectContaining({ setting: "REDIS_URL", url: node.url, code: "MOVED" })]);
      expect(fatal[0]!.msg).toBe(
        `${who}: Redis refused a command: ${REDIRECT} (REDIS_URL leads to a node of a Redis Cluster, which this service does not support: ` +
          `point it at a standalone Redis (a primary, or an endpoint that follows its failover)) — check REDIS_URL (${node.url}); exiting`,
      );
      expect(child.output()).not.toContain("worker started");
    }, EXIT_BOUND_MS + 10_000);
  }
});
