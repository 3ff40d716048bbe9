// The simulator's own token is minted again before the API would refuse it: past its exp, or
// older than JWT_MAX_TOKEN_AGE (README, The synthetic feed).
import { describe, expect, it } from "vitest";
import { fixedToken, mintedTokens, renewEveryMs } from "../../src/sim/tokens.ts";

describe("the simulator's tokens", () => {
  it("renews at half the sooner of the token's ttl and JWT_MAX_TOKEN_AGE", () => {
    const week = 7 * 24 * 3600_000;
    expect(renewEveryMs(week, 60_000)).toBe(30_000);
    expect(renewEveryMs(week, undefined)).toBe(week / 2);
    expect(renewEveryMs(60_000, week)).toBe(30_000);
  });

  it("mints once, then again once the renewal time has come", async () => {
    let now = 0;
    let minted = 0;
    const tokens = mintedTokens(async () => `token-${++minted}`, 30_000, () => now);
    expect(await tokens.current()).toBe("token-1");
    now = 29_999;
    expect(await tokens.current()).toBe("token-1");
    now = 30_000;
    expect(await tokens.current()).toBe("token-2");
    expect(minted).toBe(2);
  });

  it("renews after a refusal with one new token for the requests refused together", async () => {
    let minted = 0;
    const tokens = mintedTokens(async () => `token-${++minted}`, 30_000, () => 0);
    await tokens.current();
    expect(await Promise.all([tokens.renew(), tokens.renew(), tokens.renew()])).toEqual([true, true, true]);
    expect(minted).toBe(2);
    expect(await tokens.current()).toBe("token-2");
  });

  it("does not keep a failed mint: the next request tries again", async () => {
    let calls = 0;
    const tokens = mintedTokens(async () => (++calls === 1 ? Promise.reject(new Error("no key")) : "token"), 30_000, () => 0);
    await expect(tokens.current()).rejects.toThrow("no key");
    expect(await tokens.current()).toBe("token");
  });

  it("cannot renew a token the user gave", async () => {
    const tokens = fixedToken("given");
    expect(await tokens.current()).toBe("given");
    expect(await tokens.renew()).toBe(false);
  });
});
