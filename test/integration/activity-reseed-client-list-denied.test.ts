// npm run reseed-activity on a Redis whose ACL denies CLIENT LIST (a managed service's restricted
// user): it cannot tell whether evaluation workers are connected, so it refuses with the way
// out (--workers-stopped) rather than failing on Redis's own refusal; with the flag it runs.
// The Redis is a redis-server of the test's own: the machine's is shared.
import { spawn, type ChildProcess } from "node:child_process";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { reseedActivity, ReseedRefused } from "../../src/pipeline/activity-reseed.ts";
import { closeQueues, createQueues, type Queues } from "../../src/queue/producers.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { freePort } from "../helpers/ports.ts";
import { waitFor } from "../helpers/wait.ts";

let t: TestApp;
let server: ChildProcess;
let restricted: Redis;
let queues: Queues;

beforeAll(async () => {
  t = await startTestApp("activity-reseed-client-list-denied");
  const port = await freePort();
  server = spawn(
    "redis-server",
    ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--user", "default", "on", "nopass", "~*", "&*", "+@all", "-client|list"],
    { stdio: "ignore" },
  );
  restricted = new Redis(`redis://127.0.0.1:${port}`, { maxRetriesPerRequest: 1, retryStrategy: () => 100 });
  restricted.on("error", () => {});
  await waitFor("the test's redis-server to answer", async () => restricted.status === "ready", 10_000);
  queues = createQueues(restricted, t.config.queuePrefix);
});
afterAll(async () => {
  await closeQueues(queues);
  restricted.disconnect();
  const exited = new Promise((resolve) => server.once("exit", resolve));
  server.kill("SIGTERM");
  await exited;
  await t.close();
});

describe("npm run reseed-activity on a Redis whose ACL denies CLIENT LIST", () => {
  it("refuses, naming --workers-stopped, instead of failing on Redis's NOPERM", async () => {
    const refusal = await reseedActivity({ ...t.deps, queues }).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(ReseedRefused);
    expect((refusal as Error).message).toMatch(/^cannot tell whether evaluation workers are running \(this Redis refuses CLIENT LIST: NOPERM .*\): .*--workers-stopped$/);
  });

  it("runs with --workers-stopped: the operator vouches that none is running", async () => {
    await expect(reseedActivity({ ...t.deps, queues }, { workersStopped: true })).resolves.toMatchObject({ trackedAddresses: 0 });
  });
});
