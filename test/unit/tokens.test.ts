import { describe, expect, it } from "vitest";
import { WRAPPED_SOL_MINT, isSol, movesToken, tokenNamed } from "../../src/domain/tokens.ts";
import { MINTS } from "../helpers/chain.ts";

/** A mint outside the well-known list. */
const UNLISTED_MINT = "Ejv8hcsDVq1k2gTkgLsUV4KC3CaTNEAZmpMNv9L6dKPy";

// What large_outflow sums and what a SOL token filter selects: SOL however a feed spells it,
// and never a token of another mint that calls itself SOL.
describe("isSol", () => {
  it.each([
    { token: "SOL", mint: null, sol: true, case: "native SOL" },
    { token: "sol", mint: null, sol: true, case: "the symbol in lower case (native ingest)" },
    { token: "SOL", mint: WRAPPED_SOL_MINT, sol: true, case: "wrapped SOL from Helius" },
    { token: WRAPPED_SOL_MINT, mint: null, sol: true, case: "native ingest naming the wrapped-SOL mint as token" },
    { token: "SOL", mint: UNLISTED_MINT, sol: false, case: "a token of another mint whose creator called it SOL" },
    { token: "mSOL", mint: "mSoLzYCxHdYgdzU16g5QSh3i5K3z3KZK7ytfqcJm7So", sol: false, case: "a liquid-staking token" },
    { token: "USDC", mint: null, sol: false, case: "another symbol" },
  ])("$case → $sol", ({ token, mint, sol }) => {
    expect(isSol({ token, mint })).toBe(sol);
  });
});

// A symbol is whatever a token's creator called it: where a transaction names its mint, the
// mint decides; a well-known symbol stands for its mint; any other symbol is compared as one.
describe("movesToken", () => {
  it.each([
    { filter: "USDC", token: "USDC", mint: MINTS.USDC, moves: true, case: "a well-known symbol, the transaction with its mint" },
    { filter: "usdc", token: "USDC", mint: MINTS.USDC, moves: true, case: "the same in lower case" },
    { filter: "USDC", token: "USDC", mint: UNLISTED_MINT, moves: false, case: "a well-known symbol, a transaction of another mint calling itself USDC" },
    { filter: MINTS.USDC, token: "USDC", mint: UNLISTED_MINT, moves: false, case: "the well-known mint, the same impostor" },
    { filter: "USDC", token: "USDC", mint: null, moves: true, case: "a well-known symbol, native ingest naming it with no mint" },
    { filter: MINTS.USDC, token: "usdc", mint: null, moves: true, case: "the well-known mint, native ingest naming its symbol with no mint" },
    { filter: "FOO", token: "foo", mint: UNLISTED_MINT, moves: true, case: "another symbol, in any case and whatever the mint" },
    { filter: "FOO", token: UNLISTED_MINT, mint: UNLISTED_MINT, moves: false, case: "another symbol, a token shown by its mint" },
    { filter: UNLISTED_MINT, token: "FOO", mint: null, moves: false, case: "a mint, a transaction naming only a symbol it cannot be checked against" },
    { filter: UNLISTED_MINT, token: UNLISTED_MINT, mint: null, moves: true, case: "a mint, native ingest naming it as the token" },
    { filter: "WSOL", token: "SOL", mint: WRAPPED_SOL_MINT, moves: true, case: "WSOL, wrapped SOL from Helius" },
    { filter: "wSOL", token: "SOL", mint: null, moves: true, case: "wSOL, native SOL" },
    { filter: "SOL", token: "WSOL", mint: null, moves: true, case: "SOL, native ingest naming wrapped SOL WSOL with no mint" },
  ])("$case → $moves", ({ filter, token, mint, moves }) => {
    expect(movesToken(tokenNamed(filter), { token, mint })).toBe(moves);
  });
});
