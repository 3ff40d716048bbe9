// A server that cannot listen where its settings say (the port taken, HOST not an address of this
// machine) does not heal by waiting. The API and a worker with WORKER_METRICS_PORT end with one
// fatal line naming the setting and the system's code, and exit 1; they used to die of an
// unhandled rejection with Node's stack trace, or (HOST a name) of getaddrinfo ENOTFOUND.
import { createServer, type Server } from "node:net";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { exitWithin, spawnApi, spawnWorker } from "../helpers/pipeline.ts";
import { freePort } from "../helpers/ports.ts";

/** Start-up (tsx, on two shared cores) plus the start-up checks, which answer at once here. */
const EXIT_BOUND_MS = 30_000;
const ADMIN = { ADMIN_USER: "ops", ADMIN_PASSWORD: "an-admin-password-long-enough" };

let t: TestApp;
let holder: Server;
let takenPort: number;

beforeAll(async () => {
  t = await startTestApp("listen-failure");
  // Another process's listener, as far as the API and the worker can tell.
  holder = createServer((socket) => socket.destroy());
  await new Promise<void>((resolve) => holder.listen(0, "127.0.0.1", resolve));
  takenPort = (holder.address() as AddressInfo).port;
});
afterAll(async () => {
  await new Promise<void>((resolve) => (holder ? holder.close(() => resolve()) : resolve()));
  await t?.close();
});

type Child = ReturnType<typeof spawnApi>;
type LogLine = { level: number; msg: string; setting?: string; code?: string; port?: number; host?: string };

/** Every line the process wrote, each of which must be a log line: a stack trace's are not. */
function logLines(child: Child): LogLine[] {
  const lines = child.output().split("\n").filter((line) => line.trim() !== "");
  for (const line of lines) expect(() => JSON.parse(line), `not a log line: ${line}`).not.toThrow();
  return lines.map((line) => JSON.parse(line) as LogLine);
}

const fatal = (lines: LogLine[]) => lines.filter((line) => line.level === 60);

describe("a listen that fails", () => {
  it("has the API exit 1 with one fatal line naming PORT when another process listens on it", async () => {
    const api = spawnApi(t, { PORT: String(takenPort), HOST: "127.0.0.1" });
    expect(await exitWithin(api, EXIT_BOUND_MS), api.output()).toEqual({ code: 1, signal: null });
    const lines = logLines(api);
    expect(fatal(lines)).toEqual([
      expect.objectContaining({
        setting: "PORT",
        code: "EADDRINUSE",
        port: takenPort,
        host: "127.0.0.1",
        msg: `api: PORT ${takenPort}: address already in use (EADDRINUSE): another process listens there; exiting`,
      }),
    ]);
    expect(api.output()).not.toMatch(/^\s+at /m);
  }, EXIT_BOUND_MS + 10_000);

  it("has a worker exit 1 with one fatal line naming WORKER_METRICS_PORT when another process listens on it", async () => {
    const worker = spawnWorker(t, { ...ADMIN, WORKER_METRICS_PORT: String(takenPort), HOST: "127.0.0.1" });
    expect(await exitWithin(worker, EXIT_BOUND_MS), worker.output()).toEqual({ code: 1, signal: null });
    expect(fatal(logLines(worker))).toEqual([
      expect.objectContaining({
        setting: "WORKER_METRICS_PORT",
        code: "EADDRINUSE",
        msg: `worker: WORKER_METRICS_PORT ${takenPort}: address already in use (EADDRINUSE): another process listens there; exiting`,
      }),
    ]);
    expect(worker.output()).not.toMatch(/^\s+at /m);
    expect(worker.output()).not.toContain(ADMIN.ADMIN_PASSWORD);
  }, EXIT_BOUND_MS + 10_000);

  it("has the API exit 1 with one fatal line naming HOST when no interface of this machine has its address", async () => {
    // TEST-NET-1 (RFC 5737): an address, but no machine's own.
    const api = spawnApi(t, { PORT: String(await freePort()), HOST: "192.0.2.7" });
    expect(await exitWithin(api, EXIT_BOUND_MS), api.output()).toEqual({ code: 1, signal: null });
    expect(fatal(logLines(api))).toEqual([
      expect.objectContaining({
        setting: "HOST",
        code: "EADDRNOTAVAIL",
        msg: "api: HOST 192.0.2.7: address not available (EADDRNOTAVAIL): no network interface of this machine has that address; exiting",
      }),
    ]);
    expect(api.output()).not.toMatch(/^\s+at /m);
  }, EXIT_BOUND_MS + 10_000);

  it("has the API refuse a HOST that is not an address before it starts, in one line", async () => {
    const api = spawnApi(t, { PORT: String(await freePort()), HOST: "not-a-host" });
    expect(await exitWithin(api, EXIT_BOUND_MS), api.output()).toEqual({ code: 1, signal: null });
    expect(fatal(logLines(api))).toEqual([
      expect.objectContaining({
        msg: "invalid configuration: HOST: expected an IP address to listen on, such as 0.0.0.0 (every IPv4 interface), :: (every interface) or 127.0.0.1, or localhost",
      }),
    ]);
    expect(logLines(api)).toHaveLength(1);
  }, EXIT_BOUND_MS + 10_000);
});
