// Settings as a deployment platform hands them over: secrets from files (with their last
// newline), Kubernetes' service-link variables, one ConfigMap shared by the API and the workers,
// and the API's stop delay for load balancers.
import { describe, expect, it } from "vitest";
import { loadConfig, loadJwtConfig } from "../../src/config.ts";
import { createBasicAuthCheck } from "../../src/metrics/basic-auth.ts";
import { REQUIRED, problemsOf } from "../helpers/config-env.ts";

const SERVICE_LINK = "tcp://10.96.0.12:9464";

describe("secrets read from a file", () => {
  it("drops a secret file's newline from ADMIN_USER and ADMIN_PASSWORD, so the credentials a scraper sends let it in", () => {
    const config = loadConfig({ ...REQUIRED, ADMIN_USER: "ops\n", ADMIN_PASSWORD: "AdminSekret0123456789\n" });
    expect(config.admin).toEqual({ user: "ops", password: "AdminSekret0123456789" });
    const basic = `Basic ${Buffer.from("ops:AdminSekret0123456789").toString("base64")}`;
    expect(createBasicAuthCheck(config.admin)(basic)).toBe(true);
    // Only the ends: white space inside a password is the password's.
    expect(loadConfig({ ...REQUIRED, ADMIN_USER: "ops", ADMIN_PASSWORD: " correct horse battery\n" }).admin.password).toBe("correct horse battery");
  });

  it("drops a secret file's newline from JWT_SECRET, for the API and for the commands that mint tokens", () => {
    const secret = "s".repeat(40);
    expect(loadConfig({ ...REQUIRED, JWT_SECRET: `${secret}\r\n` }).jwt.secret).toBe(secret);
    expect(loadJwtConfig({ JWT_SECRET: ` ${secret}\n` }).secret).toBe(secret);
  });

  it("counts the minimum lengths without the white space at the ends", () => {
    expect(problemsOf({ ADMIN_USER: "ops", ADMIN_PASSWORD: "fifteen-chars-x\n" })).toContain("ADMIN_PASSWORD: expected at least 16 characters");
    expect(problemsOf({ JWT_SECRET: `${"s".repeat(31)}\n` })).toBe("invalid configuration: JWT_SECRET: expected at least 32 characters");
  });

  it("refuses a value that is only white space, naming the setting", () => {
    expect(problemsOf({ ADMIN_USER: "\n", ADMIN_PASSWORD: "AdminSekret0123456789" })).toBe(
      "invalid configuration: ADMIN_USER: expected a value, not only white space (unset it instead)",
    );
  });
});

describe("WORKER_METRICS_PORT", () => {
  it("is not read by the API, whatever its value: Kubernetes sets it to a service link in every pod beside a Service named worker-metrics", () => {
    expect(loadConfig({ ...REQUIRED, WORKER_METRICS_PORT: SERVICE_LINK }).workerMetricsPort).toBeUndefined();
    expect(loadConfig({ ...REQUIRED, WORKER_METRICS_PORT: "9464" }).workerMetricsPort).toBeUndefined();
  });

  it("refuses a service link for a worker with a line that says what it is and what to do", () => {
    expect(() => loadConfig({ ...REQUIRED, WORKER_METRICS_PORT: SERVICE_LINK }, { worker: true })).toThrow(
      `WORKER_METRICS_PORT: ${SERVICE_LINK} looks like a Kubernetes service link (injected for a Service named worker-metrics), not a port: ` +
        "set enableServiceLinks: false in the pod spec or name the Service otherwise, and give the port as a number such as 9464",
    );
  });

  it("is taken by a worker without admin credentials: the port then serves the probes alone", () => {
    const config = loadConfig({ ...REQUIRED, WORKER_METRICS_PORT: "9464" }, { worker: true });
    expect(config.workerMetricsPort).toBe(9464);
    expect(config.admin).toEqual({ user: undefined, password: undefined });
  });
});

describe("SHUTDOWN_DELAY", () => {
  it("is 0s unless set, and takes a duration up to a minute", () => {
    expect(loadConfig(REQUIRED).shutdownDelayMs).toBe(0);
    expect(loadConfig({ ...REQUIRED, SHUTDOWN_DELAY: "5s" }).shutdownDelayMs).toBe(5_000);
    expect(loadConfig({ ...REQUIRED, SHUTDOWN_DELAY: "1m" }).shutdownDelayMs).toBe(60_000);
  });

  it("refuses more than a minute, or something that is not a duration", () => {
    expect(problemsOf({ SHUTDOWN_DELAY: "5m" })).toBe("invalid configuration: SHUTDOWN_DELAY: expected a duration from 0s to 1m, such as 10s");
    expect(problemsOf({ SHUTDOWN_DELAY: "5" })).toContain("SHUTDOWN_DELAY:");
  });
});
