// A URL the router refuses (bad percent-encoding, an over-long path parameter) is answered
// before any hook runs; it still gets its one request log line and its count in the request
// histogram, as a scanner's probes and a broken client's requests should.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mintToken } from "../../src/http/mint-token.ts";
import { startLoggedApp, type LoggedApp } from "../helpers/logged-app.ts";
import { TEST_JWT_SECRET } from "../helpers/env.ts";

const ADMIN = `Basic ${Buffer.from("ops:correct-horse-battery").toString("base64")}`;
let logged: LoggedApp;

beforeAll(async () => {
  logged = await startLoggedApp("unrouted-request-log", { ADMIN_USER: "ops", ADMIN_PASSWORD: "correct-horse-battery" }, "info");
});
afterAll(async () => {
  await logged.close();
});

const requestLines = () =>
  logged.lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => line.msg === "request");

async function unmatched400s(): Promise<number> {
  const metrics = (await logged.app.inject({ url: "/metrics", headers: { authorization: ADMIN } })).body;
  const count = /^wallet_alerts_http_request_duration_seconds_count\{method="GET",route="unmatched",status_code="400"\} (\d+)$/m.exec(metrics);
  return Number(count?.[1] ?? 0);
}

describe("requests the router refuses", () => {
  it("log one request line with the status, the request id and the caller", async () => {
    const token = await mintToken(TEST_JWT_SECRET, { sub: "prober", scope: "wallets:read", ttlSeconds: 600 });
    const res = await logged.app.inject({ url: "/v1/wallets/%zz", headers: { authorization: `Bearer ${token}`, "x-request-id": "bad-url-1" } });
    expect(res.statusCode).toBe(400);
    const lines = requestLines().filter((line) => line.reqId === "bad-url-1");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ method: "GET", url: "/v1/wallets/%zz", status: 400 });
    expect(typeof lines[0]!.ms).toBe("number");
  });

  it("log the 401 of one sent without a token", async () => {
    const res = await logged.app.inject({ url: `/v1/wallets/${"w".repeat(300)}`, headers: { "x-request-id": "long-param-1" } });
    expect(res.statusCode).toBe(401);
    expect(requestLines().filter((line) => line.reqId === "long-param-1")).toMatchObject([{ status: 401 }]);
  });

  it("count in the request histogram under the route label 'unmatched'", async () => {
    const before = await unmatched400s();
    for (let i = 0; i < 3; i++) await logged.app.inject({ url: "/healthz%zz" });
    expect((await unmatched400s()) - before).toBe(3);
  });
});
