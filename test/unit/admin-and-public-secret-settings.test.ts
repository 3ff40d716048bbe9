// Two settings that were taken and did something other than the operator believed: an
// ADMIN_PASSWORD without ADMIN_USER (the admin surfaces stayed off, 404, without a word), and
// .env.example's placeholder JWT_SECRET (public: anyone could mint any caller's token).
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.ts";
import { REQUIRED, problemsOf } from "../helpers/config-env.ts";

const PASSWORD = "a-long-admin-password-123";

describe("ADMIN_PASSWORD without ADMIN_USER", () => {
  it("is refused, naming ADMIN_USER; both unset (admin surfaces off) and both set are taken as they were", () => {
    expect(problemsOf({ ADMIN_PASSWORD: PASSWORD })).toBe(
      "invalid configuration: ADMIN_USER is required with ADMIN_PASSWORD: /metrics and /admin/queues are served only with both (unset both to turn them off)",
    );
    // Not said again of an ADMIN_USER that was given and refused for its own reason.
    expect(problemsOf({ ADMIN_USER: "ops:team", ADMIN_PASSWORD: PASSWORD })).not.toContain("ADMIN_USER is required");
    expect(loadConfig(REQUIRED).admin).toEqual({ user: undefined, password: undefined });
    expect(loadConfig({ ...REQUIRED, ADMIN_USER: "ops", ADMIN_PASSWORD: PASSWORD }).admin).toEqual({ user: "ops", password: PASSWORD });
  });
});

describe("ADMIN_USER with an ADMIN_PASSWORD too short", () => {
  it("is refused for the password's length only, not also as a password missing", () => {
    expect(problemsOf({ ADMIN_USER: "ops", ADMIN_PASSWORD: "short" })).toBe("invalid configuration: ADMIN_PASSWORD: expected at least 16 characters");
    // Unset, it is missing: said so.
    expect(problemsOf({ ADMIN_USER: "ops" })).toBe("invalid configuration: ADMIN_PASSWORD is required with ADMIN_USER");
  });
});

describe("the JWT_SECRET placeholder that .env.example shipped", () => {
  it("is refused: it is public", () => {
    expect(problemsOf({ JWT_SECRET: "change-me-to-32-or-more-random-characters" })).toBe(
      "invalid configuration: JWT_SECRET: this is the placeholder from .env.example, which anyone can read: generate a secret, e.g. openssl rand -base64 48",
    );
  });

  it("is not in .env.example any more, whose settings copied as they are give no usable secret", () => {
    const example = readFileSync(new URL("../../.env.example", import.meta.url), "utf8");
    const set = Object.fromEntries(
      example
        .split("\n")
        .filter((line) => /^[A-Z0-9_]+=/.test(line))
        .map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1).trim()]),
    );
    expect(set.JWT_SECRET).toBe("");
    expect(() => loadConfig(set)).toThrow("JWT_SECRET or JWT_JWKS_URL is required");
  });
});
