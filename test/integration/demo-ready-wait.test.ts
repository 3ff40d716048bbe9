// How the demo waits for the API it started: only its own answer counts. A server already on
// the port (docker compose's API, a development server whose fallback page answers 200 to any
// path) was taken for it, and the API child's own "address already in use" line was never seen:
// the demo stopped it before it was read, and reported the other server's 401 instead.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ChildExited, killChild, listenProbe, startChild, waitForReady, type Child } from "../../src/demo/processes.ts";

// What the API child does when its port is taken: one fatal line, exit 1.
const FAILING_API = `
console.log(JSON.stringify({ level: 60, msg: "api: PORT 3000: address already in use (EADDRINUSE): another process listens there; exiting" }));
process.exitCode = 1;
`;

let dir: string;
let script: string;
const children: Child[] = [];
const servers: Server[] = [];
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "demo-ready-wait-"));
  script = join(dir, "failing-api.mjs");
  await writeFile(script, FAILING_API);
});
afterEach(async () => {
  for (const child of children.splice(0)) {
    killChild(child);
    await child.exited;
  }
  for (const server of servers.splice(0)) await new Promise((resolve) => server.close(resolve));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A server on loopback that answers every request 200 with `body` (a development server's SPA fallback). */
async function answering(body: string): Promise<{ url: string; port: number; requests: string[] }> {
  const requests: string[] = [];
  const server = createServer((request, response) => {
    requests.push(`${request.method} ${request.url}`);
    response.writeHead(200, { "content-type": body.startsWith("{") ? "application/json" : "text/html" });
    response.end(body);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, port, requests };
}

describe("the demo's wait for its API", () => {
  it("ends with the child's own last words when it exits before the API is ready", async () => {
    const other = await answering("<!doctype html><title>dev server</title>");
    const child = startChild("api", script, process.env, () => {});
    children.push(child);
    const waited = waitForReady(`${other.url}/readyz`, 120_000, [child]);
    await expect(waited).rejects.toBeInstanceOf(ChildExited);
    await expect(waited).rejects.toThrow(
      `the api exited (code 1) before ${other.url}/readyz was ready: api: PORT 3000: address already in use (EADDRINUSE): another process listens there; exiting`,
    );
  });

  it("does not take a 200 without {\"status\":\"ready\"} for readiness, and takes the API's own answer", async () => {
    const spa = await answering("<!doctype html><title>dev server</title>");
    // A stand-in for the API child that "exits" once the wait has asked twice: had the first 200 been
    // taken, the wait would have ended without a second request.
    let exit!: (code: number) => void;
    const standIn = { name: "api", exited: new Promise<number | null>((resolve) => (exit = resolve)), lastLine: () => undefined } as unknown as Child;
    const asked = setInterval(() => spa.requests.length >= 2 && exit(1), 10);
    try {
      await expect(waitForReady(`${spa.url}/readyz`, 120_000, [standIn])).rejects.toThrow(`the api exited (code 1) before ${spa.url}/readyz was ready`);
    } finally {
      clearInterval(asked);
    }
    expect(spa.requests.length).toBeGreaterThanOrEqual(2);
    const ready = await answering(JSON.stringify({ status: "ready", postgres: "up", redis: "up" }));
    await expect(waitForReady(`${ready.url}/readyz`, 120_000)).resolves.toBeUndefined();
  });
});

describe("listenProbe: whether the demo's API could listen on its port", () => {
  it("says EADDRINUSE of a port a server has on loopback, asked for every interface as the API listens", async () => {
    const other = await answering("{}");
    expect((await listenProbe("0.0.0.0", other.port))?.code).toBe("EADDRINUSE");
    expect((await listenProbe("127.0.0.1", other.port))?.code).toBe("EADDRINUSE");
  });

  it("finds a free port free, and leaves it free", async () => {
    const other = await answering("{}");
    const port = other.port;
    await new Promise((resolve) => servers.pop()!.close(resolve));
    expect(await listenProbe("0.0.0.0", port)).toBeUndefined();
    expect(await listenProbe("0.0.0.0", port)).toBeUndefined();
  });
});
