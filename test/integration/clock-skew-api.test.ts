// A real API process (src/bin/api.ts) whose clock is 120 s ahead of PostgreSQL's (libfaketime:
// test/helpers/shifted-clock.ts). An API 11 minutes behind refused every live ingest and every
// fresh token while its /readyz said ready and nothing said why. Now it says so at warn, its
// /readyz answers 503 naming its clock (a load balancer sends the requests to an API whose clock
// is right), its /metrics serves the offset, and it goes on serving what is sent to it; once
// its clock is put right it says so at info and is ready again.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { exited, waitFor } from "../helpers/pipeline.ts";
import { freePort } from "../helpers/ports.ts";
import { logLines, shiftedClock, spawnShifted } from "../helpers/shifted-clock.ts";

const ADMIN = { ADMIN_USER: "ops", ADMIN_PASSWORD: "correct-horse-battery" };
const AUTHORIZATION = `Basic ${Buffer.from(`${ADMIN.ADMIN_USER}:${ADMIN.ADMIN_PASSWORD}`).toString("base64")}`;

let t: TestApp;

beforeAll(async () => {
  t = await startTestApp("clock-skew-api");
});
afterAll(async () => {
  await t.close();
});

const clockWarnings = (output: string) => logLines(output).filter((line) => line.level === 40 && line.msg.startsWith("api: this process's clock"));

describe("an API whose clock is 120 s ahead of PostgreSQL's", () => {
  it("says so at warn, answers /readyz 503 naming its clock and serves the offset, still serves requests, and is ready once its clock is put right", async () => {
    const clock = shiftedClock("+120s");
    const port = await freePort();
    const api = spawnShifted(t, "src/bin/api.ts", clock, { ...ADMIN, PORT: String(port), HOST: "127.0.0.1", SHUTDOWN_DELAY: "0ms" });
    const get = (path: string, headers: Record<string, string> = {}) => fetch(`http://127.0.0.1:${port}${path}`, { headers }).catch(() => null);
    const offset = async () => {
      const body = await (await get("/metrics", { authorization: AUTHORIZATION }))!.text();
      return Number(/^wallet_alerts_clock_offset_seconds (\S+)$/m.exec(body)?.[1]);
    };
    try {
      await waitFor("the API to say its clock is off", async () => clockWarnings(api.output()).length > 0 || api.exitCode !== null, 30_000);
      expect(api.exitCode, api.output()).toBeNull();
      const [warned] = clockWarnings(api.output());
      expect(warned!.msg).toMatch(
        /^api: this process's clock is 120 s ahead of PostgreSQL's \(bound 5 s\): it is not ready until they agree \(it still serves the requests sent to it\); set this host's clock right/,
      );
      expect(Math.abs((warned!.offsetSeconds as number) - 120)).toBeLessThan(2);
      expect(warned!.boundSeconds).toBe(5);

      const readyz = await waitFor("the API to answer", () => get("/readyz"));
      expect(readyz.status).toBe(503);
      expect(readyz.headers.get("retry-after")).toBe("5");
      expect(await readyz.json()).toMatchObject({
        status: 503,
        code: "unavailable",
        detail: "this process's clock is 120 s ahead of PostgreSQL's (bound 5 s): it is not ready until they agree (it still serves the requests sent to it)",
      });
      expect(Math.abs((await offset()) - 120)).toBeLessThan(2);
      // Not refused: a request sent to it is served.
      const wallets = (await get("/v1/wallets", { authorization: `Bearer ${await t.token("alice")}` }))!;
      expect(wallets.status).toBe(200);

      clock.set("+0s");
      await waitFor("the API to be ready again", async () => (await get("/readyz"))?.status === 200, 15_000);
      const again = logLines(api.output()).filter((line) => line.level === 30 && line.msg.startsWith("api: this process's clock agrees with PostgreSQL's again"));
      expect(again).toHaveLength(1);
      expect(again[0]!.msg).toMatch(/ (ahead|behind), bound 5 s\): it is ready again$/);
      expect(Math.abs(await offset())).toBeLessThan(1);
      expect(clockWarnings(api.output())).toHaveLength(1);
    } finally {
      api.kill("SIGTERM");
      const { code } = await exited(api);
      clock.remove();
      expect(code, api.output()).toBe(0);
    }
  }, 60_000);
});
