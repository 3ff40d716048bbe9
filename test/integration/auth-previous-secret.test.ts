// JWT_SECRET_PREVIOUS: during a rotation of the HS256 secret, the API takes tokens signed with
// either secret, each checked alike, and signs (npm run token) with JWT_SECRET only.
import { generateKeyPair, SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.ts";
import { createTokenVerifier } from "../../src/http/auth.ts";
import { mintToken } from "../../src/http/mint-token.ts";
import { problem } from "../helpers/alert-fixtures.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { REQUIRED } from "../helpers/config-env.ts";

const OLD_SECRET = "old-secret-being-replaced-0123456789-abcdef";
const NEW_SECRET = "new-secret-taking-over-0123456789-abcdefghij";
const OTHER_SECRET = "a-secret-this-service-never-had-0123456789";
const ISSUER = "https://id.example.com/";
const AUDIENCE = "wallet-alerts";
const ROUTE = "/v1/risk/alerts";
const nowSeconds = () => Math.floor(Date.now() / 1000);

/** An HS256 token with exactly these claims. */
const hs256 = (claims: Record<string, unknown>, secret: string) =>
  new SignJWT(claims).setProtectedHeader({ alg: "HS256", typ: "JWT" }).sign(new TextEncoder().encode(secret));
const good = (extra: Record<string, unknown> = {}) => ({
  sub: "alice",
  scope: "alerts:read",
  iss: ISSUER,
  aud: AUDIENCE,
  iat: nowSeconds(),
  exp: nowSeconds() + 600,
  ...extra,
});

describe("an API with JWT_SECRET and JWT_SECRET_PREVIOUS", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp("auth-previous-secret", {
      JWT_SECRET: NEW_SECRET,
      JWT_SECRET_PREVIOUS: OLD_SECRET,
      JWT_ISSUER: ISSUER,
      JWT_AUDIENCE: AUDIENCE,
      JWT_MAX_TOKEN_AGE: "1h",
    });
  });
  afterAll(async () => {
    await t.close();
  });
  const call = async (token: string) => t.app.inject({ url: ROUTE, headers: { authorization: `Bearer ${token}` } });
  const refusal = async (token: string) => {
    const res = await call(token);
    expect(res.headers["www-authenticate"]).toContain('error="invalid_token"');
    return problem(res, 401, "unauthorized").detail;
  };

  it("admits a token signed with either secret, as the same caller", async () => {
    for (const secret of [NEW_SECRET, OLD_SECRET]) {
      const res = await call(await hs256(good({ sub: "alice-rotating" }), secret));
      expect(res.statusCode, secret === NEW_SECRET ? "JWT_SECRET" : "JWT_SECRET_PREVIOUS").toBe(200);
    }
  });

  it("refuses a token signed with neither", async () => {
    expect(await refusal(await hs256(good(), OTHER_SECRET))).toBe("the token's signature does not verify");
  });

  it("checks a token signed with the previous secret exactly as one signed with the current one", async () => {
    const cases: Record<string, unknown>[] = [
      good({ exp: nowSeconds() - 60 }),
      good({ aud: "another-service" }),
      good({ iss: "https://evil.example.com/" }),
      good({ iat: nowSeconds() - 2 * 3600 }),
      good({ iat: nowSeconds() + 3600 }),
      good({ sub: "a".repeat(256) }),
      good({ nbf: nowSeconds() + 300 }),
    ];
    for (const claims of cases) {
      const byCurrent = await refusal(await hs256(claims, NEW_SECRET));
      expect(await refusal(await hs256(claims, OLD_SECRET)), JSON.stringify(claims)).toBe(byCurrent);
    }
    const withoutScope = await call(await hs256(good({ scope: "wallets:read" }), OLD_SECRET));
    problem(withoutScope, 403, "forbidden");
  });

  it("refuses an RS256 or alg: none token whatever the secrets: one family of tokens", async () => {
    const none = `${Buffer.from(JSON.stringify({ alg: "none", typ: "JWT" })).toString("base64url")}.${Buffer.from(JSON.stringify(good())).toString("base64url")}.`;
    await refusal(none);
    const { privateKey } = await generateKeyPair("RS256");
    const rs256 = await new SignJWT(good()).setProtectedHeader({ alg: "RS256", typ: "JWT" }).sign(privateKey);
    expect(await refusal(rs256)).toBe("the token's algorithm is not accepted");
  });
});

describe("the rotation procedure (README, Rotating secrets): no valid token refused at any step", () => {
  // Each API process's verifier, built from its environment as the API builds it.
  const apiWith = (env: Record<string, string>) => createTokenVerifier(loadConfig({ ...REQUIRED, ...env }).jwt);
  const mintedWith = (secret: string) => mintToken(secret, { sub: "alice", scope: "alerts:read", ttlSeconds: 600 });
  const admitted = async (api: ReturnType<typeof apiWith>, token: string) => (await api(token)).sub === "alice";

  it("rolls JWT_SECRET=new with JWT_SECRET_PREVIOUS=old, switches the minter, then drops the old secret", async () => {
    const before = apiWith({ JWT_SECRET: OLD_SECRET });
    const during = apiWith({ JWT_SECRET: NEW_SECRET, JWT_SECRET_PREVIOUS: OLD_SECRET });
    const after = apiWith({ JWT_SECRET: NEW_SECRET });
    // Step 1, mid-roll (processes on `before` and on `during`): the minter still signs with the old secret.
    const oldToken = await mintedWith(OLD_SECRET);
    for (const api of [before, during]) expect(await admitted(api, oldToken)).toBe(true);
    // Step 2, every process on `during`: the minter switches; tokens of either secret are taken.
    const newToken = await mintedWith(NEW_SECRET);
    expect(await admitted(during, newToken)).toBe(true);
    expect(await admitted(during, oldToken)).toBe(true);
    // Step 3, mid-roll (processes on `during` and on `after`), once every old token has expired.
    for (const api of [during, after]) expect(await admitted(api, newToken)).toBe(true);
    // Why the order: a process not yet restarted refuses the new secret's tokens.
    await expect(before(newToken)).rejects.toMatchObject({ code: "unauthorized" });
    await expect(after(oldToken)).rejects.toMatchObject({ code: "unauthorized" });
  });
});
