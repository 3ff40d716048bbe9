// An identity provider's key rollover: it adds a key to its JWKS and signs with it at once
// (Keycloak's new active key, an emergency rotation). A real JWKS server on loopback, whose keys
// the tests change; the verifier's clock is the test's, so "seconds later" is a number, not a wait.
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from "jose";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { createTokenVerifier } from "../../src/http/auth.ts";
import { REFETCH_COOLDOWN_MS } from "../../src/http/jwks-keys.ts";
import { problem } from "../helpers/alert-fixtures.ts";
import { startTestApp } from "../helpers/app.ts";
import { startJwksServer } from "../helpers/jwks-server.ts";

const ISSUER = "https://id.example.com/";
const AUDIENCE = "wallet-alerts";
const T0 = Date.parse("2026-11-27T00:00:00Z");

type SigningKey = { jwk: JWK; privateKey: CryptoKey };
let oldKey: SigningKey;
let newKey: SigningKey;
let published: JWK[];
let jwksUp = true;
let fetches = 0;
let jwks: Awaited<ReturnType<typeof startJwksServer>>;
let url: string;

async function signingKey(kid: string): Promise<SigningKey> {
  const pair = await generateKeyPair("RS256");
  return { jwk: { ...(await exportJWK(pair.publicKey)), kid, alg: "RS256", use: "sig" }, privateKey: pair.privateKey };
}

beforeAll(async () => {
  [oldKey, newKey] = await Promise.all([signingKey("key-2026-10"), signingKey("key-2026-11")]);
  jwks = await startJwksServer({ keys: () => published, up: () => jwksUp, onFetch: () => void fetches++ });
  url = jwks.url;
});
afterAll(async () => {
  await jwks.close();
});
afterEach(() => {
  vi.useRealTimers();
  jwksUp = true;
});

/** A token of ours signed with `key`, naming `kid` (the key's own by default); exp from the real clock, far enough. */
const token = (key: SigningKey, kid = key.jwk.kid!) =>
  new SignJWT({ sub: "alice", scope: "alerts:read", iss: ISSUER, aud: AUDIENCE, jti: crypto.randomUUID() })
    .setProtectedHeader({ alg: "RS256", kid, typ: "JWT" })
    .setExpirationTime(Math.floor(Math.max(Date.now(), T0) / 1000) + 3 * 3600)
    .sign(key.privateKey);

/** A verifier on the test's clock (`clock.now`), whose first token (signed with the old key) has fetched the set once. */
async function verifierWithKeysFetched(clock: { now: number }) {
  published = [oldKey.jwk];
  const verify = createTokenVerifier({ secret: undefined, jwksUrl: url, issuer: ISSUER, audience: AUDIENCE }, () => clock.now);
  const before = fetches;
  expect((await verify(await token(oldKey))).sub).toBe("alice");
  expect(fetches).toBe(before + 1);
  return verify;
}

describe("a key the identity provider adds and signs with at once", () => {
  it("is fetched and verified at once when the last fetch is a cooldown old", async () => {
    const clock = { now: T0 };
    const verify = await verifierWithKeysFetched(clock);
    published = [oldKey.jwk, newKey.jwk];
    clock.now += REFETCH_COOLDOWN_MS;
    const before = fetches;
    expect((await verify(await token(newKey))).sub).toBe("alice");
    expect(fetches).toBe(before + 1);
  });

  it("is a 503 with Retry-After (the seconds until the set may be fetched again), never a 401, within the cooldown; then verified", async () => {
    const clock = { now: T0 };
    const verify = await verifierWithKeysFetched(clock);
    published = [oldKey.jwk, newKey.jwk];
    clock.now += 2_000;
    const before = fetches;
    const tooSoon = await verify(await token(newKey)).catch((error: unknown) => error);
    expect(tooSoon).toMatchObject({ code: "unavailable", status: 503, headers: { "retry-after": String(REFETCH_COOLDOWN_MS / 1000 - 2) } });
    expect((tooSoon as { headers: Record<string, string> }).headers["www-authenticate"]).toBeUndefined();
    expect(fetches).toBe(before);
    clock.now = T0 + REFETCH_COOLDOWN_MS;
    expect((await verify(await token(newKey))).sub).toBe("alice");
    expect(fetches).toBe(before + 1);
  });

  it("is a 401 'no key matches the token' once a set fetched after the token came lacks it", async () => {
    const clock = { now: T0 };
    const verify = await verifierWithKeysFetched(clock);
    clock.now += REFETCH_COOLDOWN_MS;
    const before = fetches;
    await expect(verify(await token(newKey))).rejects.toMatchObject({ code: "unauthorized", message: "no key matches the token" });
    expect(fetches).toBe(before + 1);
  });

  it("is a 503, never a 401, while the JWKS cannot be fetched; the keys last fetched still verify the tokens they sign", async () => {
    const clock = { now: T0 };
    const verify = await verifierWithKeysFetched(clock);
    published = [oldKey.jwk, newKey.jwk];
    jwksUp = false;
    clock.now += REFETCH_COOLDOWN_MS;
    await expect(verify(await token(newKey))).rejects.toMatchObject({ code: "unavailable", headers: { "retry-after": "5" } });
    expect((await verify(await token(oldKey))).sub).toBe("alice");
    jwksUp = true;
    clock.now += REFETCH_COOLDOWN_MS;
    expect((await verify(await token(newKey))).sub).toBe("alice");
  });

  it("costs the provider at most one fetch per cooldown, however many tokens name keys it never had", async () => {
    const clock = { now: T0 };
    const verify = await verifierWithKeysFetched(clock);
    const before = fetches;
    const madeUp = () => token(newKey, `made-up-${crypto.randomUUID()}`);
    const answers: unknown[] = [];
    for (const offset of [0, 1_000, 2_500, 4_999, 5_000, 5_001, 7_000, 9_999, 10_000]) {
      clock.now = T0 + offset;
      const tokens = await Promise.all(Array.from({ length: 20 }, madeUp));
      answers.push(...(await Promise.all(tokens.map((t) => verify(t).catch((error: unknown) => error)))));
    }
    // Fetched again at T0 + 5 s and T0 + 10 s only.
    expect(fetches).toBe(before + 2);
    const codes = new Set(answers.map((answer) => (answer as { code?: string }).code));
    expect([...codes].sort()).toEqual(["unauthorized", "unavailable"]);
  });
});

describe("over HTTP", () => {
  it("answers problem+json 503 unavailable with Retry-After, no WWW-Authenticate, to a token naming a key not fetched yet", async () => {
    // The app's verifier runs on the real clock: Date alone is faked, and moved by hand.
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(T0);
    published = [oldKey.jwk];
    const app = await startTestApp("jwks-rollover", { JWT_JWKS_URL: url, JWT_SECRET: "", JWT_ISSUER: ISSUER, JWT_AUDIENCE: AUDIENCE });
    try {
      const call = async (key: SigningKey) =>
        app.app.inject({ url: "/v1/risk/alerts", headers: { authorization: `Bearer ${await token(key)}` } });
      expect((await call(oldKey)).statusCode).toBe(200);
      published = [oldKey.jwk, newKey.jwk];
      vi.setSystemTime(T0 + 1_000);
      const res = await call(newKey);
      const body = problem(res, 503, "unavailable");
      expect(body.detail).toContain("JWT_JWKS_URL");
      expect(res.headers["retry-after"]).toBe(String(REFETCH_COOLDOWN_MS / 1000 - 1));
      expect(res.headers["www-authenticate"]).toBeUndefined();
      vi.setSystemTime(T0 + REFETCH_COOLDOWN_MS);
      expect((await call(newKey)).statusCode).toBe(200);
    } finally {
      await app.close();
    }
  });
});
