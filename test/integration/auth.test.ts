// The authentication matrix of DESIGN.md section 3 against a real /v1 route: HS256 with
// the shared secret, issuer and audience checks, and RS256/ES256 through a JWKS served by a
// real local HTTP server.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, exportSPKI, generateKeyPair, SignJWT, type CryptoKey, type JWK } from "jose";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { REFETCH_COOLDOWN_MS } from "../../src/http/jwks-keys.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { TEST_JWT_SECRET } from "../helpers/env.ts";
import { problem } from "../helpers/alert-fixtures.ts";

const ROUTE = "/v1/risk/alerts";
const now = () => Math.floor(Date.now() / 1000);
const secretKey = (secret: string) => new TextEncoder().encode(secret);
const base64url = (value: object) => Buffer.from(JSON.stringify(value)).toString("base64url");

/** An HS256 token with exactly the claims given (no defaults), so a test can leave one out. */
async function hs256(claims: Record<string, unknown>, secret = TEST_JWT_SECRET): Promise<string> {
  return new SignJWT(claims).setProtectedHeader({ alg: "HS256", typ: "JWT" }).sign(secretKey(secret));
}

const good = (extra: Record<string, unknown> = {}) => ({ sub: "alice", scope: "alerts:read", exp: now() + 600, ...extra });

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp("auth");
});
afterAll(async () => {
  await t.close();
});

const call = (app: TestApp, authorization?: string) =>
  app.app.inject({ url: ROUTE, headers: authorization === undefined ? {} : { authorization } });

function expectInvalidToken(res: Awaited<ReturnType<typeof call>>): string {
  const body = problem(res, 401, "unauthorized");
  expect(res.headers["www-authenticate"]).toContain('error="invalid_token"');
  return body.detail;
}

describe("HS256 bearer tokens", () => {
  it("accepts a valid token", async () => {
    const res = await call(t, `Bearer ${await hs256(good())}`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ alerts: [], total: 0 });
  });

  it("answers a request without Authorization with 401, invalid_token and problem+json", async () => {
    const detail = expectInvalidToken(await call(t));
    expect(detail).toContain("Authorization: Bearer");
  });

  it.each(["Bearer", "Bearer ", "Basic YWxpY2U6c2VjcmV0", "Token abc", "Bearer a b", "bearer-abc", "Bearer not-a-jwt", "Bearer a.b.c"])(
    "refuses the malformed header %j with 401",
    async (header) => {
      expectInvalidToken(await call(t, header));
    },
  );

  it("refuses a token signed with another secret", async () => {
    const forged = await hs256(good(), "another-secret-that-is-long-enough-9876543210");
    expect(expectInvalidToken(await call(t, `Bearer ${forged}`))).toBe("the token's signature does not verify");
  });

  it("refuses an alg: none token", async () => {
    const unsigned = `${base64url({ alg: "none", typ: "JWT" })}.${base64url(good())}.`;
    expectInvalidToken(await call(t, `Bearer ${unsigned}`));
  });

  it("refuses a token whose payload was changed after signing", async () => {
    const [header, , signature] = (await hs256(good())).split(".");
    const tampered = `${header}.${base64url(good({ sub: "mallory" }))}.${signature}`;
    expectInvalidToken(await call(t, `Bearer ${tampered}`));
  });

  it("refuses a token expired beyond the 30 s tolerance and accepts one expired 10 s ago", async () => {
    const expired = await hs256(good({ exp: now() - 60 }));
    expect(expectInvalidToken(await call(t, `Bearer ${expired}`))).toBe("the token has expired");
    const justExpired = await hs256(good({ exp: now() - 10 }));
    expect((await call(t, `Bearer ${justExpired}`)).statusCode).toBe(200);
  });

  it("refuses a token without exp", async () => {
    const { exp: _exp, ...claims } = good();
    expect(expectInvalidToken(await call(t, `Bearer ${await hs256(claims)}`))).toBe("the token has no exp claim, which this service requires");
  });

  it("refuses a token without sub", async () => {
    const { sub: _sub, ...claims } = good();
    expect(expectInvalidToken(await call(t, `Bearer ${await hs256(claims)}`))).toBe("the token has no sub claim, which this service requires");
  });

  it("refuses a token that is not valid yet (nbf in the future)", async () => {
    expectInvalidToken(await call(t, `Bearer ${await hs256(good({ nbf: now() + 300 }))}`));
  });

  it("answers a token without the route's scope with 403 insufficient_scope", async () => {
    const res = await call(t, `Bearer ${await hs256(good({ scope: "wallets:read alerts:write" }))}`);
    problem(res, 403, "forbidden");
    expect(res.headers["www-authenticate"]).toContain('error="insufficient_scope"');
    expect(res.headers["www-authenticate"]).toContain('scope="alerts:read"');
  });

  it("reads scopes from an scp array or space-separated string, and lets admin stand for every scope", async () => {
    const { scope: _scope, ...claims } = good();
    expect((await call(t, `Bearer ${await hs256({ ...claims, scp: ["alerts:read"] })}`)).statusCode).toBe(200);
    // Microsoft Entra ID writes scp as one space-separated string.
    expect((await call(t, `Bearer ${await hs256({ ...claims, scp: "wallets:read alerts:read" })}`)).statusCode).toBe(200);
    expect((await call(t, `Bearer ${await hs256(good({ scope: "admin" }))}`)).statusCode).toBe(200);
  });

  it("answers 401 before anything else: no token, a bad body and a wrong content type", async () => {
    const res = await t.app.inject({
      method: "POST",
      url: ROUTE,
      headers: { "content-type": "text/plain" },
      payload: "threshold=lots",
    });
    expectInvalidToken(res);
    const unknown = await t.app.inject({ method: "DELETE", url: "/v1/risk/alerts/not-an-id?bogus=1" });
    expectInvalidToken(unknown);
  });
});

describe("issuer and audience", () => {
  let checked: TestApp;
  beforeAll(async () => {
    checked = await startTestApp("auth-iss-aud", { JWT_ISSUER: "https://id.example.com/", JWT_AUDIENCE: "wallet-alerts" });
  });
  afterAll(async () => {
    await checked.close();
  });

  const claims = (iss: string | undefined, aud: string | undefined) =>
    good({ ...(iss ? { iss } : {}), ...(aud ? { aud } : {}) });

  it("accepts the configured issuer and audience", async () => {
    const token = await hs256(claims("https://id.example.com/", "wallet-alerts"));
    expect((await call(checked, `Bearer ${token}`)).statusCode).toBe(200);
  });

  it.each([
    ["a wrong issuer", "https://evil.example.com/", "wallet-alerts", "the token's iss claim is not accepted"],
    ["no issuer", undefined, "wallet-alerts", "the token has no iss claim, which this service requires"],
    ["a wrong audience", "https://id.example.com/", "another-service", "the token's aud claim is not accepted"],
    ["no audience", "https://id.example.com/", undefined, "the token has no aud claim, which this service requires"],
  ])("refuses %s", async (_case, iss, aud, expected) => {
    const detail = expectInvalidToken(await call(checked, `Bearer ${await hs256(claims(iss, aud))}`));
    expect(detail).toBe(expected);
  });
});

const JWKS_ISSUER = "https://id.example.com/";
const JWKS_AUDIENCE = "wallet-alerts";
const fromOurIssuer = (extra: Record<string, unknown> = {}) => good({ iss: JWKS_ISSUER, aud: JWKS_AUDIENCE, ...extra });

describe("RS256 and ES256 through JWT_JWKS_URL", () => {
  let jwksServer: Server;
  let jwksApp: TestApp;
  let rsaPrivate: CryptoKey;
  let rsaPublic: CryptoKey;
  let ecPrivate: CryptoKey;
  let strangerPrivate: CryptoKey;

  beforeAll(async () => {
    const rsa = await generateKeyPair("RS256");
    const ec = await generateKeyPair("ES256");
    const retiredEc = await generateKeyPair("ES256"); // another key in the set, never used to sign
    ({ privateKey: rsaPrivate, publicKey: rsaPublic } = rsa);
    ecPrivate = ec.privateKey;
    strangerPrivate = (await generateKeyPair("RS256")).privateKey;
    const keys: JWK[] = [
      { ...(await exportJWK(rsaPublic)), kid: "rsa-1", alg: "RS256", use: "sig" },
      { ...(await exportJWK(ec.publicKey)), kid: "ec-1", alg: "ES256", use: "sig" },
      { ...(await exportJWK(retiredEc.publicKey)), kid: "ec-old", alg: "ES256", use: "sig" },
    ];
    jwksServer = createServer((req, res) => {
      res.writeHead(req.url === "/.well-known/jwks.json" ? 200 : 404, { "content-type": "application/json" });
      res.end(JSON.stringify(req.url === "/.well-known/jwks.json" ? { keys } : {}));
    });
    await new Promise<void>((resolve) => jwksServer.listen(0, "127.0.0.1", resolve));
    const { port } = jwksServer.address() as AddressInfo;
    jwksApp = await startTestApp("auth-jwks", {
      JWT_JWKS_URL: `http://127.0.0.1:${port}/.well-known/jwks.json`,
      JWT_SECRET: "",
      JWT_ISSUER: JWKS_ISSUER,
      JWT_AUDIENCE: JWKS_AUDIENCE,
    });
  });
  afterAll(async () => {
    await jwksApp.close();
    await new Promise((resolve) => jwksServer.close(resolve));
  });

  const sign = (alg: "RS256" | "ES256", kid: string, key: CryptoKey, claims = fromOurIssuer()) =>
    new SignJWT(claims).setProtectedHeader({ alg, kid, typ: "JWT" }).sign(key);

  it("refuses a token signed by a key of the JWKS for another issuer or audience: the provider signs other apps' tokens too", async () => {
    const foreign = [fromOurIssuer({ iss: "https://tenant-of-someone-else.example.com/" }), fromOurIssuer({ aud: "another-app" })];
    for (const claims of foreign) expectInvalidToken(await call(jwksApp, `Bearer ${await sign("RS256", "rsa-1", rsaPrivate, { ...claims, scope: "admin" })}`));
  });

  it("accepts an RS256 token signed by a key of the JWKS", async () => {
    const res = await call(jwksApp, `Bearer ${await sign("RS256", "rsa-1", rsaPrivate)}`);
    expect(res.statusCode).toBe(200);
  });

  it("accepts an ES256 token signed by a key of the JWKS", async () => {
    expect((await call(jwksApp, `Bearer ${await sign("ES256", "ec-1", ecPrivate)}`)).statusCode).toBe(200);
  });

  it("refuses an RS256 token signed by a key outside the JWKS", async () => {
    expectInvalidToken(await call(jwksApp, `Bearer ${await sign("RS256", "rsa-1", strangerPrivate)}`));
    // A key the set lacks is refused once a set fetched after the token came lacks it too: the
    // clock (Date only) is moved past the cooldown between fetches, so that one may be made
    // (jwks-rollover.test.ts: the 503 within the cooldown).
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(Date.now() + REFETCH_COOLDOWN_MS);
    const unknownKid = await sign("RS256", "unknown-kid", strangerPrivate);
    expect(expectInvalidToken(await call(jwksApp, `Bearer ${unknownKid}`))).toBe("no key matches the token");
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("refuses an HS256 token keyed with the public key (algorithm switching)", async () => {
    const pem = await exportSPKI(rsaPublic);
    const jwk = await exportJWK(rsaPublic);
    for (const material of [pem, JSON.stringify(jwk), jwk.n!]) {
      const switched = await new SignJWT(good())
        .setProtectedHeader({ alg: "HS256", kid: "rsa-1", typ: "JWT" })
        .sign(secretKey(material));
      expect(expectInvalidToken(await call(jwksApp, `Bearer ${switched}`))).toBe("the token's algorithm is not accepted");
    }
  });

  it("refuses an HS256 token signed with the shared secret once a JWKS is configured", async () => {
    expectInvalidToken(await call(jwksApp, `Bearer ${await hs256(good())}`));
  });
});
