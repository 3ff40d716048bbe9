// A token's age against a real /v1 route (README, Authentication): an `iat` more than the 30 s
// clock tolerance in the future is a 401 whatever the settings (it was accepted: jose judges iat
// only when given a maxTokenAge), and with JWT_MAX_TOKEN_AGE a token issued longer ago than
// that, or without an iat, is a 401 too, however far away its exp.
import { SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { problem } from "../helpers/alert-fixtures.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { TEST_JWT_SECRET } from "../helpers/env.ts";

const ROUTE = "/v1/risk/alerts";
const now = () => Math.floor(Date.now() / 1000);
const YEAR = 365 * 24 * 3600;

async function hs256(claims: Record<string, unknown>): Promise<string> {
  return new SignJWT({ sub: "alice", scope: "alerts:read", exp: now() + 600, ...claims })
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .sign(new TextEncoder().encode(TEST_JWT_SECRET));
}

let uncapped: TestApp;
let capped: TestApp;
beforeAll(async () => {
  uncapped = await startTestApp("auth-token-age");
  capped = await startTestApp("auth-token-age-capped", { JWT_MAX_TOKEN_AGE: "1h" });
});
afterAll(async () => {
  await uncapped?.close();
  await capped?.close();
});

const call = async (app: TestApp, claims: Record<string, unknown>) =>
  app.app.inject({ url: ROUTE, headers: { authorization: `Bearer ${await hs256(claims)}` } });

function invalidToken(res: Awaited<ReturnType<typeof call>>): string {
  const body = problem(res, 401, "unauthorized");
  expect(res.headers["www-authenticate"]).toContain('error="invalid_token"');
  return body.detail;
}

describe("a token issued in the future", () => {
  it.each([
    ["without JWT_MAX_TOKEN_AGE", () => uncapped],
    ["with JWT_MAX_TOKEN_AGE", () => capped],
  ])("is refused beyond the 30 s tolerance and accepted within it, %s", async (_case, app) => {
    expect(invalidToken(await call(app(), { iat: now() + YEAR }))).toBe("the token's iat claim is more than 30 s in the future");
    expect(invalidToken(await call(app(), { iat: now() + 120 }))).toBe("the token's iat claim is more than 30 s in the future");
    expect((await call(app(), { iat: now() + 10 })).statusCode).toBe(200);
  });
});

describe("JWT_MAX_TOKEN_AGE", () => {
  it("refuses a token issued longer ago than the cap, though its exp is far away", async () => {
    const detail = invalidToken(await call(capped, { iat: now() - 2 * 3600, exp: now() + YEAR }));
    expect(detail).toBe("the token was issued more than 3600 s ago, the longest this service accepts; get a new one");
    // Without the cap the same token is good until its exp.
    expect((await call(uncapped, { iat: now() - 2 * 3600, exp: now() + YEAR })).statusCode).toBe(200);
  });

  it("accepts a token younger than the cap", async () => {
    expect((await call(capped, { iat: now() - 50 * 60, exp: now() + YEAR })).statusCode).toBe(200);
  });

  it("refuses a token without iat, which only the cap needs", async () => {
    expect(invalidToken(await call(capped, {}))).toBe("the token has no iat claim, which this service needs to cap how old a token may be");
    expect((await call(uncapped, {})).statusCode).toBe(200);
  });
});
