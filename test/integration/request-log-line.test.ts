// The line each API request writes: where a call came from (the client's address, its user
// agent) beside whose token it carried, for whoever investigates a token's misuse; and the probes
// of orchestrators and load balancers, several every few seconds per pod, kept out of info.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mintToken } from "../../src/http/mint-token.ts";
import { USER_AGENT_LOG_LIMIT, requestLogLevel } from "../../src/http/request-log-line.ts";
import { TEST_JWT_SECRET } from "../helpers/env.ts";
import { startLoggedApp, type LoggedApp } from "../helpers/logged-app.ts";

let logged: LoggedApp;

beforeAll(async () => {
  logged = await startLoggedApp("request-log-line", {}, "debug");
});
afterAll(async () => {
  await logged.close();
});

type RequestLine = { level: number; reqId: string; status: number; caller?: string; ip?: string; userAgent?: string };
const requestLine = (reqId: string): RequestLine[] =>
  logged.lines.map((line) => JSON.parse(line) as RequestLine & { msg: string }).filter((line) => line.msg === "request" && line.reqId === reqId);

describe("a request's log line", () => {
  it("names the client's address and user agent beside the caller", async () => {
    const token = await mintToken(TEST_JWT_SECRET, { sub: "alice", scope: "wallets:read", ttlSeconds: 600 });
    const res = await logged.app.inject({
      url: "/v1/wallets",
      headers: { authorization: `Bearer ${token}`, "user-agent": "curl/8.5.0", "x-request-id": "with-agent-1" },
      remoteAddress: "203.0.113.7",
    });
    expect(res.statusCode).toBe(200);
    expect(requestLine("with-agent-1")).toMatchObject([{ level: 30, status: 200, caller: "alice", ip: "203.0.113.7", userAgent: "curl/8.5.0" }]);
  });

  it("cuts a long user agent, and names the address of a request refused without a token", async () => {
    const res = await logged.app.inject({
      url: "/v1/wallets",
      headers: { "user-agent": `x${"y".repeat(1_000)}`, "x-request-id": "long-agent-1" },
      remoteAddress: "198.51.100.4",
    });
    expect(res.statusCode).toBe(401);
    const [line] = requestLine("long-agent-1");
    expect(line).toMatchObject({ status: 401, ip: "198.51.100.4" });
    expect(line!.userAgent).toBe(`x${"y".repeat(USER_AGENT_LOG_LIMIT - 1)}`);
  });

  it("takes the connection's address, not an X-Forwarded-For the client wrote (no trustProxy)", async () => {
    await logged.app.inject({ url: "/healthz", headers: { "x-forwarded-for": "10.0.0.1", "x-request-id": "forwarded-1" }, remoteAddress: "192.0.2.9" });
    expect(requestLine("forwarded-1")).toMatchObject([{ ip: "192.0.2.9" }]);
  });
});

describe("a probe's log line", () => {
  it("is at debug when the probe succeeds", async () => {
    for (const url of ["/healthz", "/readyz"]) {
      const res = await logged.app.inject({ url, headers: { "x-request-id": `probe${url.replace("/", "-")}` } });
      expect(res.statusCode, res.body).toBe(200);
      expect(requestLine(`probe${url.replace("/", "-")}`)).toMatchObject([{ level: 20, status: 200 }]);
    }
  });

  it("stays at info when the probe fails, or the request only looks like one", async () => {
    expect(requestLogLevel("/readyz", 503)).toBe("info");
    expect(requestLogLevel("/healthz", 500)).toBe("info");
    const res = await logged.app.inject({ method: "POST", url: "/healthz", headers: { "x-request-id": "probe-post-1" } });
    expect(res.statusCode).toBeGreaterThanOrEqual(400);
    expect(requestLine("probe-post-1")).toMatchObject([{ level: 30 }]);
  });
});
