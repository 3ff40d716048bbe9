// A Redis that cannot be reached at start: the API and a worker wait for it (the API answers 503
// meanwhile), and now say why, as they do of PostgreSQL. They said only "Redis is not reachable
// yet", the connection's error being logged at debug: a host, port or TLS scheme typed wrong
// looked like an outage.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { exited, spawnApi, spawnWorker, waitFor } from "../helpers/pipeline.ts";
import { freePort } from "../helpers/ports.ts";

/** Start-up (tsx, on two shared cores), then the 5 s the check gives Redis. */
const SAY_BOUND_MS = 60_000;
let t: TestApp;

beforeAll(async () => {
  t = await startTestApp("redis-unreachable-reason");
});
afterAll(async () => {
  await t?.close();
});

describe("a starting process whose Redis cannot be reached", { timeout: SAY_BOUND_MS + 30_000 }, () => {
  for (const name of ["api", "worker"] as const) {
    it(`has the ${name} say why, naming REDIS_URL with its password hidden, and keep running`, async () => {
      const port = await freePort();
      const url = `redis://:redis-pw-hidden@127.0.0.1:${port}`;
      const child = name === "api" ? spawnApi(t, { PORT: "0", HOST: "127.0.0.1", REDIS_URL: url }) : spawnWorker(t, { REDIS_URL: url });
      try {
        const line = await waitFor(
          "the process to say why Redis is not reachable",
          async () => child.output().split("\n").find((l) => l.includes("did not answer within 5 s")),
          SAY_BOUND_MS,
        );
        const parsed = JSON.parse(line) as { level: number; msg: string; setting: string; url: string };
        expect(parsed).toMatchObject({ level: 40, setting: "REDIS_URL", url: `redis://:***@127.0.0.1:${port}` });
        expect(parsed.msg).toBe(
          `${name}: Redis at redis://:***@127.0.0.1:${port} did not answer within 5 s (connect ECONNREFUSED 127.0.0.1:${port}); check REDIS_URL if it should be up`,
        );
        expect(child.output()).not.toContain("redis-pw-hidden");
        expect(child.exitCode).toBeNull();
      } finally {
        child.kill("SIGTERM");
        await exited(child);
      }
    });
  }
});
