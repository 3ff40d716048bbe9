import { describe, expect, it } from "vitest";
import { WRAPPED_SOL_MINT, isSol } from "../../src/domain/sol.ts";

// What large_outflow sums and what a SOL token filter selects: SOL however a feed spells it.
describe("isSol", () => {
  it.each([
    { token: "SOL", mint: null, sol: true, case: "native SOL" },
    { token: "sol", mint: null, sol: true, case: "the symbol in lower case (native ingest)" },
    { token: "SOL", mint: WRAPPED_SOL_MINT, sol: true, case: "wrapped SOL from Helius" },
    { token: WRAPPED_SOL_MINT, mint: null, sol: true, case: "native ingest naming the wrapped-SOL mint as token" },
    { token: "mSOL", mint: "mSoLzYCxHdYgdzU16g5QSh3i5K3z3KZK7ytfqcJm7So", sol: false, case: "a liquid-staking token" },
    { token: "USDC", mint: null, sol: false, case: "another symbol" },
  ])("$case → $sol", ({ token, mint, sol }) => {
    expect(isSol({ token, mint })).toBe(sol);
  });
});
