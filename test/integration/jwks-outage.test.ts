// The identity provider's JWKS endpoint failing is not the token's fault. A real local JWKS
// server that the tests switch between answering and failing; the clock (Date only) is moved
// past jose's 10-minute key cache so that the key set must be fetched again.
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from "jose";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { REFETCH_COOLDOWN_MS, STALE_KEYS_MS } from "../../src/http/jwks-keys.ts";
import { problem } from "../helpers/alert-fixtures.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { startJwksServer } from "../helpers/jwks-server.ts";

const MINUTE = 60_000;
let jwks: Awaited<ReturnType<typeof startJwksServer>>;
let keys: JWK[];
let privateKey: CryptoKey;
let jwksUp = true;
let fetches = 0;
let url: string;

beforeAll(async () => {
  const pair = await generateKeyPair("RS256");
  privateKey = pair.privateKey;
  keys = [{ ...(await exportJWK(pair.publicKey)), kid: "rsa-1", alg: "RS256", use: "sig" }];
  jwks = await startJwksServer({ keys: () => keys, up: () => jwksUp, onFetch: () => void fetches++ });
  url = jwks.url;
});
afterAll(async () => {
  await jwks.close();
});
afterEach(() => {
  vi.useRealTimers();
  jwksUp = true;
});

const ISSUER = "https://id.example.com/";
const AUDIENCE = "wallet-alerts";

/** A fresh token each call (a new jti), so no call is answered from the verified-token cache. */
const token = () =>
  new SignJWT({ sub: "alice", scope: "alerts:read", jti: crypto.randomUUID(), iss: ISSUER, aud: AUDIENCE })
    .setProtectedHeader({ alg: "RS256", kid: "rsa-1", typ: "JWT" })
    .setExpirationTime(Math.floor(Date.now() / 1000) + 3 * 3600)
    .sign(privateKey);

async function withApp(label: string, run: (call: () => Promise<Awaited<ReturnType<TestApp["app"]["inject"]>>>) => Promise<void>) {
  const app = await startTestApp(label, { JWT_JWKS_URL: url, JWT_SECRET: "", JWT_ISSUER: ISSUER, JWT_AUDIENCE: AUDIENCE });
  try {
    await run(async () => app.app.inject({ url: "/v1/risk/alerts", headers: { authorization: `Bearer ${await token()}` } }));
  } finally {
    await app.close();
  }
}

describe("JWT_JWKS_URL that cannot be fetched", () => {
  it("answers 503 problem+json with Retry-After, not 401, when the key set was never fetched", async () => {
    jwksUp = false;
    await withApp("jwks-never", async (call) => {
      const res = await call();
      const body = problem(res, 503, "unavailable");
      expect(body.detail).toContain("JWT_JWKS_URL");
      expect(res.headers["retry-after"]).toBe("5");
      expect(res.headers["www-authenticate"]).toBeUndefined();
    });
  });

  it("keeps verifying with the keys last fetched while the JWKS fails, for up to an hour, then answers 503 until it is back", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(new Date("2026-11-27T00:00:00Z"));
    await withApp("jwks-outage", async (call) => {
      expect((await call()).statusCode).toBe(200);
      jwksUp = false;
      const before = fetches;
      // Past jose's 10-minute cache: the key set is fetched again, fails, and the last one serves.
      vi.setSystemTime(Date.now() + 11 * MINUTE);
      expect((await call()).statusCode).toBe(200);
      expect(fetches).toBeGreaterThan(before);
      // Beyond the bound, the keys are too old to trust alone.
      vi.setSystemTime(Date.now() + STALE_KEYS_MS);
      problem(await call(), 503, "unavailable");
      // Back: fetched again once the cooldown since the last (failed) attempt has passed, as
      // Retry-After says; one attempt per cooldown at most, failed or not.
      jwksUp = true;
      const fetchesBack = fetches;
      const early = await call();
      problem(early, 503, "unavailable");
      expect(early.headers["retry-after"]).toBe(String(REFETCH_COOLDOWN_MS / 1000));
      expect(fetches).toBe(fetchesBack);
      vi.setSystemTime(Date.now() + REFETCH_COOLDOWN_MS);
      expect((await call()).statusCode).toBe(200);
    });
  });
});
