import { describe, expect, it } from "vitest";
import { renewingToken } from "../../src/demo/token-source.ts";

describe("the demo's renewing token", () => {
  const ttlSeconds = 24 * 3600;
  const counting = () => {
    let minted = 0;
    return { mint: async () => `token-${++minted}`, minted: () => minted };
  };

  it("keeps one token for the first half of its lifetime", async () => {
    let now = 0;
    const { mint, minted } = counting();
    const token = renewingToken(mint, ttlSeconds, () => now);
    expect(await token()).toBe("token-1");
    now = (ttlSeconds * 1000) / 2 - 1;
    expect(await token()).toBe("token-1");
    expect(minted()).toBe(1);
  });

  it("mints a new token once half of the lifetime has passed, long before the old one expires", async () => {
    let now = 0;
    const { mint } = counting();
    const token = renewingToken(mint, ttlSeconds, () => now);
    await token();
    now = (ttlSeconds * 1000) / 2;
    expect(await token()).toBe("token-2");
    now = ttlSeconds * 1000 * 3;
    expect(await token()).toBe("token-3");
  });

  it("tries again on the next call when minting failed", async () => {
    let attempts = 0;
    const token = renewingToken(
      async () => {
        attempts++;
        if (attempts === 1) throw new Error("no secret yet");
        return "token";
      },
      ttlSeconds,
      () => 0,
    );
    await expect(token()).rejects.toThrow("no secret yet");
    expect(await token()).toBe("token");
  });
});
