// The verifier remembers verified tokens; the memory must never outlive the token.
import { describe, expect, it } from "vitest";
import { createTokenVerifier } from "../../src/http/auth.ts";
import { mintToken } from "../../src/http/mint-token.ts";

const secret = "unit-test-secret-long-enough-0123456789";
const jwt = { secret, jwksUrl: undefined, issuer: undefined, audience: undefined };

describe("token verifier", () => {
  it("accepts a remembered token until its exp plus the 30 s tolerance, then refuses it", async () => {
    let now = Date.now();
    const verify = createTokenVerifier(jwt, () => now);
    const token = await mintToken(secret, { sub: "alice", scope: "wallets:read", ttlSeconds: 60 });
    expect((await verify(token)).sub).toBe("alice");
    now += 60_000 + 29_000;
    expect((await verify(token)).scopes.has("wallets:read")).toBe(true);
    now += 2_000;
    await expect(verify(token)).rejects.toMatchObject({ code: "unauthorized", message: "the token has expired" });
  });

  it("never remembers a token that failed", async () => {
    const verify = createTokenVerifier(jwt);
    const token = await mintToken("another-secret-long-enough-0123456789", { sub: "mallory", ttlSeconds: 60 });
    await expect(verify(token)).rejects.toMatchObject({ code: "unauthorized" });
    await expect(verify(token)).rejects.toMatchObject({ code: "unauthorized" });
  });
});
