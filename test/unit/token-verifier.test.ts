// The verifier remembers verified tokens; the memory must never outlive the token.
import { decodeJwt } from "jose";
import { describe, expect, it } from "vitest";
import { createTokenVerifier } from "../../src/http/auth.ts";
import { mintToken } from "../../src/http/mint-token.ts";

const secret = "unit-test-secret-long-enough-0123456789";
const jwt = { secret, jwksUrl: undefined, issuer: undefined, audience: undefined };

describe("token verifier", () => {
  it("accepts a remembered token until its exp plus the 30 s tolerance, then refuses it", async () => {
    const token = await mintToken(secret, { sub: "alice", scope: "wallets:read", ttlSeconds: 60 });
    // The verifier's clock is set from the token's own exp (minted on the real clock), so each
    // step falls on its side of exp + 30 s however long minting took.
    const exp = decodeJwt(token).exp! * 1000;
    let now = exp - 60_000;
    const verify = createTokenVerifier(jwt, () => now);
    expect((await verify(token)).sub).toBe("alice");
    now = exp + 29_000;
    expect((await verify(token)).scopes.has("wallets:read")).toBe(true);
    now = exp + 31_000;
    await expect(verify(token)).rejects.toMatchObject({ code: "unauthorized", message: "the token has expired" });
  });

  it("never remembers a token that failed", async () => {
    const verify = createTokenVerifier(jwt);
    const token = await mintToken("another-secret-long-enough-0123456789", { sub: "mallory", ttlSeconds: 60 });
    await expect(verify(token)).rejects.toMatchObject({ code: "unauthorized" });
    await expect(verify(token)).rejects.toMatchObject({ code: "unauthorized" });
  });
});
