// SHUTDOWN_DELAY with the real API process: Kubernetes takes a terminating pod out of its
// endpoints seconds after SIGTERM, and an API that stopped accepting at once refused the
// requests still sent to it. On SIGTERM it now goes on serving for the delay, /readyz answering
// 503 so that load balancers stop sending, and then drains and exits 0. SIGINT (a person's
// Ctrl-C) does not wait.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { exitWithin, spawnApi, waitFor } from "../helpers/pipeline.ts";
import { freePort } from "../helpers/ports.ts";
import { jsonLogLines } from "../helpers/scripted-redis.ts";

/** Long enough for the requests below to be made within it, on two loaded cores. */
const DELAY_MS = 10_000;
/** Start-up (tsx) plus the delay and the drain, generously. */
const EXIT_BOUND_MS = DELAY_MS + 30_000;

let t: TestApp;
let token: string;

beforeAll(async () => {
  t = await startTestApp("shutdown-delay");
  token = await t.token("alice");
});
afterAll(async () => {
  await t?.close();
});

async function startApi(delay: string) {
  const port = await freePort();
  const api = spawnApi(t, { PORT: String(port), HOST: "127.0.0.1", SHUTDOWN_DELAY: delay, LOG_LEVEL: "info" });
  const base = `http://127.0.0.1:${port}`;
  await waitFor("the API to be ready", async () => (await fetch(`${base}/readyz`).catch(() => null))?.ok, 30_000);
  return { api, base };
}

describe("SHUTDOWN_DELAY", () => {
  it("keeps serving after SIGTERM with /readyz answering 503, then exits 0; after SIGINT it does not wait", async () => {
    const [terminated, interrupted] = await Promise.all([startApi(`${DELAY_MS}ms`), startApi("1m")]);

    terminated.api.kill("SIGTERM");
    interrupted.api.kill("SIGINT");
    const draining = await waitFor("/readyz to answer 503", async () => {
      const response = await fetch(`${terminated.base}/readyz`);
      return response.status === 503 ? response : null;
    });
    expect(await draining.json()).toMatchObject({ status: 503, code: "unavailable", detail: "the server is shutting down" });
    // Everything else is still served, each answer closing its connection.
    const health = await fetch(`${terminated.base}/healthz`);
    expect(health.status).toBe(200);
    const wallets = await fetch(`${terminated.base}/v1/wallets`, { headers: { authorization: `Bearer ${token}` } });
    expect(wallets.status).toBe(200);
    expect(wallets.headers.get("connection")).toBe("close");

    const [terminatedExit, interruptedExit] = await Promise.all([
      exitWithin(terminated.api, EXIT_BOUND_MS),
      // Well inside its one-minute delay: SIGINT does not wait for it.
      exitWithin(interrupted.api, 40_000),
    ]);
    expect(terminatedExit, terminated.api.output()).toEqual({ code: 0, signal: null });
    expect(interruptedExit, interrupted.api.output()).toEqual({ code: 0, signal: null });
    const lines = jsonLogLines<{ msg: string; shutdownDelayMs?: number }>(terminated.api.output());
    expect(lines.filter((line) => line.shutdownDelayMs === DELAY_MS)).toHaveLength(1);
    expect(jsonLogLines<{ shutdownDelayMs?: number }>(interrupted.api.output()).filter((line) => line.shutdownDelayMs !== undefined)).toEqual([]);
  }, EXIT_BOUND_MS + 40_000);
});
