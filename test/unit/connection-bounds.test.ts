// The bounds on a connection's phases (connection-bounds.ts) as loadConfig's settings make them;
// test/integration/slow-clients.test.ts holds a listening API to them with real sockets.
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.ts";
import { connectionOptions } from "../../src/http/connection-bounds.ts";
import { REQUIRED, problemsOf } from "../helpers/config-env.ts";

describe("connection bounds", () => {
  it("give a request two minutes to arrive by default (a 10 MiB ingest body at 0.7 Mbit/s), its headers 20 s", () => {
    expect(connectionOptions(loadConfig(REQUIRED))).toEqual({
      requestTimeout: 120_000,
      keepAliveTimeout: 72_000,
      connectionTimeout: 125_000,
      http: { requestTimeout: 120_000, headersTimeout: 20_000, connectionsCheckingInterval: 2_000 },
    });
  });

  it("never cut an idle connection before a request may have arrived or been answered at its deadline", () => {
    expect(connectionOptions(loadConfig({ ...REQUIRED, REQUEST_TIMEOUT: "5m" })).connectionTimeout).toBe(305_000);
    expect(connectionOptions(loadConfig({ ...REQUIRED, REQUEST_RECEIVE_TIMEOUT: "10m" })).connectionTimeout).toBe(605_000);
  });

  it("keep the headers' bound within a shorter REQUEST_RECEIVE_TIMEOUT (Node would stretch it to the longer one)", () => {
    expect(connectionOptions(loadConfig({ ...REQUIRED, REQUEST_RECEIVE_TIMEOUT: "5s" })).http).toMatchObject({ requestTimeout: 5_000, headersTimeout: 5_000 });
  });

  it("refuse a REQUEST_RECEIVE_TIMEOUT outside 1s to 30m at start", () => {
    expect(problemsOf({ REQUEST_RECEIVE_TIMEOUT: "500ms" })).toContain("REQUEST_RECEIVE_TIMEOUT: expected a duration from 1s to 30m, such as 10s");
    expect(problemsOf({ REQUEST_RECEIVE_TIMEOUT: "2h" })).toContain("REQUEST_RECEIVE_TIMEOUT: expected a duration from 1s to 30m");
  });
});

describe("JWT_MAX_TOKEN_AGE", () => {
  it("is unset (no cap) by default, and read as a duration", () => {
    expect(loadConfig(REQUIRED).jwt.maxTokenAgeMs).toBeUndefined();
    expect(loadConfig({ ...REQUIRED, JWT_MAX_TOKEN_AGE: "12h" }).jwt.maxTokenAgeMs).toBe(12 * 3_600_000);
  });

  it("is refused at start below a minute (mostly the clock tolerance), above a year, or without a unit", () => {
    expect(problemsOf({ JWT_MAX_TOKEN_AGE: "30s" })).toContain("JWT_MAX_TOKEN_AGE: expected a duration from 1m to 8760h");
    expect(problemsOf({ JWT_MAX_TOKEN_AGE: "9000h" })).toContain("JWT_MAX_TOKEN_AGE: expected a duration from 1m to 8760h");
    expect(problemsOf({ JWT_MAX_TOKEN_AGE: "3600" })).toContain("JWT_MAX_TOKEN_AGE:");
  });
});
