// A token's age (README, Authentication): an `iat` more than the 30 s clock tolerance in the
// future is refused, with or without JWT_MAX_TOKEN_AGE; with it, a token older than the cap (plus
// the tolerance) is refused, also one the verifier remembers from before.
import { SignJWT } from "jose";
import { describe, expect, it } from "vitest";
import { createTokenVerifier } from "../../src/http/auth.ts";

const secret = "unit-test-secret-long-enough-0123456789";
const HOUR_MS = 3_600_000;
/** A fixed instant, in whole seconds, that every clock below is set from. */
const T0 = 1_800_000_000;

function token(claims: Record<string, unknown>): Promise<string> {
  return new SignJWT({ sub: "alice", scope: "wallets:read", exp: T0 + 24 * 3600, ...claims })
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .sign(new TextEncoder().encode(secret));
}

const verifierAt = (clock: { now: number }, maxTokenAgeMs?: number) =>
  createTokenVerifier({ secret, jwksUrl: undefined, issuer: undefined, audience: undefined, maxTokenAgeMs }, () => clock.now);

describe("a token's iat", () => {
  it.each([undefined, HOUR_MS])("is refused more than 30 s in the future and accepted 20 s ahead (JWT_MAX_TOKEN_AGE %s)", async (maxTokenAgeMs) => {
    const verify = verifierAt({ now: T0 * 1000 }, maxTokenAgeMs);
    await expect(verify(await token({ iat: T0 + 31 }))).rejects.toMatchObject({
      code: "unauthorized",
      message: "the token's iat claim is more than 30 s in the future",
    });
    await expect(verify(await token({ iat: T0 + 365 * 24 * 3600 }))).rejects.toMatchObject({ code: "unauthorized" });
    expect((await verify(await token({ iat: T0 + 20 }))).sub).toBe("alice");
  });

  it("is not needed without JWT_MAX_TOKEN_AGE, and a token of any age is accepted until its exp", async () => {
    const verify = verifierAt({ now: T0 * 1000 });
    expect((await verify(await token({}))).sub).toBe("alice");
    expect((await verify(await token({ iat: T0 - 365 * 24 * 3600 }))).sub).toBe("alice");
  });
});

describe("JWT_MAX_TOKEN_AGE", () => {
  it("refuses a token without iat, which it needs", async () => {
    const verify = verifierAt({ now: T0 * 1000 }, HOUR_MS);
    await expect(verify(await token({}))).rejects.toMatchObject({
      code: "unauthorized",
      message: "the token has no iat claim, which this service needs to cap how old a token may be",
    });
  });

  it("refuses a remembered token once it is older than the cap plus the 30 s tolerance, though its exp is a day away", async () => {
    const clock = { now: (T0 + 3600 - 60) * 1000 };
    const verify = verifierAt(clock, HOUR_MS);
    const young = await token({ iat: T0 });
    expect((await verify(young)).sub).toBe("alice");
    clock.now = (T0 + 3600 + 29) * 1000;
    expect(verify.known(young)?.sub, "still remembered within the tolerance").toBe("alice");
    expect((await verify(young)).sub).toBe("alice");
    clock.now = (T0 + 3600 + 31) * 1000;
    expect(verify.known(young), "forgotten once the cap refuses it").toBeUndefined();
    await expect(verify(young)).rejects.toMatchObject({
      code: "unauthorized",
      message: "the token was issued more than 3600 s ago, the longest this service accepts; get a new one",
    });
  });
});
