// npm run token as a developer runs it: a real process. It must print a token the API accepts,
// or refuse, naming the flag, input that would make a token the API rejects or misreads.
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { decodeJwt, jwtVerify } from "jose";
import { describe, expect, it } from "vitest";
import { createTokenVerifier } from "../../src/http/auth.ts";
import { TEST_JWT_SECRET } from "../helpers/env.ts";

const run = promisify(execFile);
type Outcome = { code: number; stdout: string; stderr: string };

async function tokenCommand(args: string[], env: Record<string, string> = { JWT_SECRET: TEST_JWT_SECRET }): Promise<Outcome> {
  try {
    const { stdout, stderr } = await run(process.execPath, ["--import", "tsx", "src/bin/token.ts", ...args], {
      env: { PATH: process.env.PATH ?? "", ...env },
      timeout: 20_000,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const { code, stdout, stderr } = error as Outcome;
    return { code, stdout, stderr };
  }
}

const lastLine = (stdout: string) => stdout.trim().split("\n").at(-1) ?? "";

describe("npm run token", () => {
  it("mints a token the API accepts, with the scopes, contacts and whole-second TTL asked for", async () => {
    const env = { JWT_SECRET: TEST_JWT_SECRET, JWT_ISSUER: "https://issuer.test/", JWT_AUDIENCE: "wallet-alerts" };
    const { code, stdout } = await tokenCommand(
      ["--sub", "alice", "--scope", " wallets:read  alerts:write ", "--email", "alice@example.com", "--phone", "+14155552671", "--ttl", "90s"],
      env,
    );
    expect(code).toBe(0);
    const token = lastLine(stdout);
    const verify = createTokenVerifier({ secret: TEST_JWT_SECRET, jwksUrl: undefined, issuer: env.JWT_ISSUER, audience: env.JWT_AUDIENCE });
    const caller = await verify(token);
    expect(caller).toMatchObject({ sub: "alice", email: "alice@example.com", phone: "+14155552671" });
    expect([...caller.scopes].sort()).toEqual(["alerts:write", "wallets:read"]);
    const { iat, exp } = decodeJwt(token);
    expect(exp! - iat!).toBe(90);
  });

  it("refuses a scope the API does not know (every route would answer 403), naming --scope and the known ones", async () => {
    const { code, stdout, stderr } = await tokenCommand(["--sub", "alice", "--scope", "wallet:read bogus"]);
    expect(code).toBe(1);
    expect(stdout).toBe("");
    expect(stderr).toContain('--scope: unknown scope "wallet:read", "bogus"');
    expect(stderr).toContain("wallets:read, wallets:write, transactions:read");
  });

  it("refuses a TTL under a second (expired on arrival) and one that is not whole seconds (a fractional exp), naming --ttl", async () => {
    for (const ttl of ["0s", "500ms", "1500ms"]) {
      const { code, stdout, stderr } = await tokenCommand(["--sub", "alice", "--ttl", ttl]);
      expect(code, ttl).toBe(1);
      expect(stdout, ttl).toBe("");
      expect(stderr, ttl).toContain(`--ttl: "${ttl}"`);
    }
    const { code, stdout } = await tokenCommand(["--sub", "alice", "--ttl", "1000ms"]);
    expect(code).toBe(0);
    const { iat, exp } = decodeJwt(lastLine(stdout));
    expect(exp! - iat!).toBe(1);
  });

  it("refuses a --ttl longer than JWT_MAX_TOKEN_AGE (the API would refuse the token past it), naming both; without --ttl the token lasts the cap", async () => {
    const env = { JWT_SECRET: TEST_JWT_SECRET, JWT_MAX_TOKEN_AGE: "90m" };
    const refused = await tokenCommand(["--sub", "alice", "--ttl", "2h"], env);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe("");
    expect(refused.stderr.trim()).toBe('--ttl: "2h" is longer than JWT_MAX_TOKEN_AGE (90m), after which the API refuses the token whatever its exp; ask for at most 90m');

    for (const [args, ttlSeconds] of [[["--ttl", "90m"], 5_400], [[], 5_400]] as const) {
      const minted = await tokenCommand(["--sub", "alice", ...args], env);
      expect(minted.code, minted.stderr).toBe(0);
      const token = lastLine(minted.stdout);
      const { iat, exp } = decodeJwt(token);
      expect(exp! - iat!).toBe(ttlSeconds);
      const verify = createTokenVerifier({ secret: TEST_JWT_SECRET, jwksUrl: undefined, issuer: undefined, audience: undefined, maxTokenAgeMs: 90 * 60_000 });
      expect((await verify(token)).sub).toBe("alice");
    }

    // Unset, no cap: any TTL, and 12 hours without one.
    const long = await tokenCommand(["--sub", "alice", "--ttl", "9000h"]);
    expect(long.code).toBe(0);
    const { iat, exp } = decodeJwt(lastLine(long.stdout));
    expect(exp! - iat!).toBe(9000 * 3600);
    const usual = decodeJwt(lastLine((await tokenCommand(["--sub", "alice"])).stdout));
    expect(usual.exp! - usual.iat!).toBe(12 * 3600);
  });

  it("refuses a phone number not in E.164 and an email that is not an address, naming each flag", async () => {
    const { code, stdout, stderr } = await tokenCommand(["--sub", "alice", "--phone", "notaphone", "--email", "nope"]);
    expect(code).toBe(1);
    expect(stdout).toBe("");
    expect(stderr).toContain("--phone must be an E.164 phone number such as +14155552671, which SMS alerts refuse");
    expect(stderr).toContain("--email: expected an email address such as alice@example.com");
  });

  it("refuses a premium-rate phone number, which an SMS alert falling back to the claim would refuse", async () => {
    const { code, stdout, stderr } = await tokenCommand(["--sub", "alice", "--phone", "+19005551234"]);
    expect(code).toBe(1);
    expect(stdout).toBe("");
    expect(stderr).toContain("--phone is a premium-rate number");
  });

  it("grants only a customer's scopes when --scope is not given (never ingest:write, risk:write or admin, which reach every caller's data)", async () => {
    const { code, stdout } = await tokenCommand(["--sub", "alice"]);
    expect(code).toBe(0);
    const caller = await createTokenVerifier({ secret: TEST_JWT_SECRET, jwksUrl: undefined, issuer: undefined, audience: undefined })(lastLine(stdout));
    expect([...caller.scopes].sort()).toEqual(["alerts:read", "alerts:write", "transactions:read", "wallets:read", "wallets:write"]);
  });

  it("refuses a subject the API would refuse (over 255 characters, a control character), naming --sub", async () => {
    for (const sub of ["a".repeat(256), "ali\u0007ce"]) {
      const { code, stdout, stderr } = await tokenCommand(["--sub", sub]);
      expect(code).toBe(1);
      expect(stdout).toBe("");
      expect(stderr).toContain("--sub:");
      expect(stderr).toContain("401");
    }
  });

  it("reads only the JWT settings: a bad PORT or SMTP_URL kept for the API does not stop it, a short JWT_SECRET does", async () => {
    const minted = await tokenCommand(["--sub", "alice"], { JWT_SECRET: TEST_JWT_SECRET, PORT: "not-a-port", SMTP_URL: "mailto:x" });
    expect(minted.code).toBe(0);
    expect(decodeJwt(lastLine(minted.stdout)).sub).toBe("alice");

    const refused = await tokenCommand(["--sub", "alice"], { JWT_SECRET: "short", PORT: "not-a-port" });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("invalid configuration: JWT_SECRET: expected at least 32 characters");
    expect(refused.stderr).not.toContain("PORT");
  });

  it("signs with JWT_SECRET only during a rotation, and refuses a JWT_SECRET_PREVIOUS the API would refuse", async () => {
    const previous = "old-secret-being-replaced-0123456789-abcdef";
    const minted = await tokenCommand(["--sub", "alice"], { JWT_SECRET: TEST_JWT_SECRET, JWT_SECRET_PREVIOUS: previous });
    expect(minted.code).toBe(0);
    const token = lastLine(minted.stdout);
    const key = (secret: string) => new TextEncoder().encode(secret);
    expect((await jwtVerify(token, key(TEST_JWT_SECRET))).payload.sub).toBe("alice");
    await expect(jwtVerify(token, key(previous))).rejects.toThrow();

    const refused = await tokenCommand(["--sub", "alice"], { JWT_SECRET: TEST_JWT_SECRET, JWT_SECRET_PREVIOUS: TEST_JWT_SECRET });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("JWT_SECRET_PREVIOUS is the same as JWT_SECRET");
    expect(refused.stdout + refused.stderr).not.toContain(TEST_JWT_SECRET);
  });
});
