import { describe, expect, it } from "vitest";
import { evaluateLargeTransfer, matchesToken } from "../../../src/domain/conditions/index.ts";
import { MINTS, OTHER, SIGNATURE, WALLET, rule, tx } from "./fixtures.ts";

/** A mint outside the well-known list, so shown by its mint; and an address differing from it only in the last letter's case. */
const UNLISTED_MINT = "Ejv8hcsDVq1k2gTkgLsUV4KC3CaTNEAZmpMNv9L6dKPy";
const CASE_TWIN_MINT = "Ejv8hcsDVq1k2gTkgLsUV4KC3CaTNEAZmpMNv9L6dKPY";
const MSOL_MINT = "mSoLzYCxHdYgdzU16g5QSh3i5K3z3KZK7ytfqcJm7So";
const WSOL_MINT = "So11111111111111111111111111111111111111112";

describe("large_transfer", () => {
  it.each([
    { amount: 9_999.99, fires: false, case: "just below the threshold" },
    { amount: 10_000, fires: true, case: "at the threshold" },
    { amount: 10_000.01, fires: true, case: "just above the threshold" },
  ])("$case ($amount against 10,000) fires: $fires", ({ amount, fires }) => {
    const firing = evaluateLargeTransfer(rule("large_transfer"), tx({ amount }));
    expect(firing !== null).toBe(fires);
    if (firing) expect(firing.observed).toBe(amount);
  });

  it("fires with the signature as dedupe key, the amount observed and a sentence naming both sides", () => {
    expect(evaluateLargeTransfer(rule("large_transfer"), tx())).toEqual({
      alertId: "alr_large_transfer",
      dedupeKey: SIGNATURE,
      observed: 25_000,
      reason: "Sent 25,000 USDC to A3CbMR…ZdE6Fb (threshold 10,000).",
      transactionSignature: SIGNATURE,
    });
  });

  it.each([
    { from: WALLET, to: OTHER, reason: "Sent 25,000 USDC to A3CbMR…ZdE6Fb (threshold 10,000)." },
    { from: OTHER, to: WALLET, reason: "Received 25,000 USDC from A3CbMR…ZdE6Fb (threshold 10,000)." },
  ])("fires in either direction ($reason)", ({ from, to, reason }) => {
    expect(evaluateLargeTransfer(rule("large_transfer"), tx({ from, to }))?.reason).toBe(reason);
  });

  it("does not fire for a transaction the wallet is not part of", () => {
    expect(evaluateLargeTransfer(rule("large_transfer"), tx({ from: OTHER, to: "EnW4CwtRs8E5gytqTLiNAat69YQV4t6XJYssqbsUwQ1k" }))).toBeNull();
  });

  it("does not fire for a self-transfer: the wallet's holdings did not change", () => {
    expect(evaluateLargeTransfer(rule("large_transfer"), tx({ from: WALLET, to: WALLET }))).toBeNull();
  });

  it("does not fire for a failed transaction: nothing moved", () => {
    expect(evaluateLargeTransfer(rule("large_transfer"), tx({ status: "failed" }))).toBeNull();
  });

  it.each([
    { type: "swap", reason: "Sent 25,000 USDC to A3CbMR…ZdE6Fb in a swap (threshold 10,000)." },
    { type: "stake", reason: "Sent 25,000 USDC to A3CbMR…ZdE6Fb in a stake (threshold 10,000)." },
    { type: "nft", reason: "Sent 25,000 USDC to A3CbMR…ZdE6Fb in an NFT trade (threshold 10,000)." },
    { type: "other", reason: "Sent 25,000 USDC to A3CbMR…ZdE6Fb (threshold 10,000)." },
  ] as const)("fires for any transaction type with an amount ($type)", ({ type, reason }) => {
    expect(evaluateLargeTransfer(rule("large_transfer"), tx({ type }))?.reason).toBe(reason);
  });

  it.each([
    { filter: null, fires: true, case: "no filter matches any token" },
    { filter: "USDC", fires: true, case: "the symbol" },
    { filter: "usdc", fires: true, case: "the symbol in another case" },
    { filter: MINTS.USDC, fires: true, case: "the mint" },
    { filter: "BONK", fires: false, case: "another symbol" },
    { filter: MINTS.BONK, fires: false, case: "another mint" },
    { filter: MINTS.USDC.toLowerCase(), fires: false, case: "the mint in another case (base58 is case-sensitive)" },
  ])("token filter: $case → fires $fires", ({ filter, fires }) => {
    const firing = evaluateLargeTransfer(rule("large_transfer", { token: filter }), tx());
    expect(firing !== null).toBe(fires);
  });

  it.each([
    { token: "USDC", mint: UNLISTED_MINT, shown: "Ejv8…dKPy", case: "a token of another mint calling itself USDC: by its mint" },
    { token: "USDC", mint: null, shown: "USDC", case: "a well-known symbol with no mint (native ingest): taken at its word" },
    { token: "MYTOKEN", mint: null, shown: "MYTOKEN", case: "a plain symbol with no mint: as given" },
    { token: "bit.ly/3xYzA", mint: null, shown: "(unlisted)", case: "a symbol holding a link: not repeated" },
    { token: "USD\u0421", mint: null, shown: "(unlisted)", case: "a lookalike symbol (Cyrillic С): not repeated" },
    { token: "SOL\u202e", mint: null, shown: "(unlisted)", case: "a symbol with a bidi override: not repeated" },
  ])("names the token in the sentence as a person should read it: $case", ({ token, mint, shown }) => {
    expect(evaluateLargeTransfer(rule("large_transfer"), tx({ token, mint }))?.reason).toBe(`Sent 25,000 ${shown} to A3CbMR…ZdE6Fb (threshold 10,000).`);
  });

  it("matches a filter against the token when the transaction names its mint as the token, and names a well-known one by its symbol", () => {
    const byMint = tx({ token: MINTS.JUP, mint: null });
    expect(matchesToken(MINTS.JUP, byMint)).toBe(true);
    expect(evaluateLargeTransfer(rule("large_transfer", { token: MINTS.JUP }), byMint)?.reason).toBe(
      "Sent 25,000 JUP to A3CbMR…ZdE6Fb (threshold 10,000).",
    );
  });

  // A token without a symbol is shown by its mint: Helius sets token = mint, native ingest may
  // send the mint as token and no mint. Either way it is base58, so matched exactly, while a
  // symbol, with or without its mint, still matches in any case.
  it.each([
    { token: UNLISTED_MINT, mint: UNLISTED_MINT, filter: UNLISTED_MINT, fires: true, case: "Helius: the same mint" },
    { token: UNLISTED_MINT, mint: UNLISTED_MINT, filter: UNLISTED_MINT.toLowerCase(), fires: false, case: "Helius: the mint in lower case" },
    { token: UNLISTED_MINT, mint: UNLISTED_MINT, filter: UNLISTED_MINT.toUpperCase(), fires: false, case: "Helius: the mint in upper case" },
    { token: UNLISTED_MINT, mint: UNLISTED_MINT, filter: CASE_TWIN_MINT, fires: false, case: "Helius: a mint differing only in case" },
    { token: UNLISTED_MINT, mint: null, filter: UNLISTED_MINT, fires: true, case: "native: the same mint" },
    { token: UNLISTED_MINT, mint: null, filter: UNLISTED_MINT.toLowerCase(), fires: false, case: "native: the mint in lower case" },
    { token: UNLISTED_MINT, mint: null, filter: CASE_TWIN_MINT, fires: false, case: "native: a mint differing only in case" },
    { token: "BONK", mint: null, filter: "bonk", fires: true, case: "native: a symbol in another case" },
    { token: "mSOL", mint: MSOL_MINT, filter: "MSOL", fires: true, case: "Helius: mSOL written as MSOL" },
    { token: "USDC", mint: UNLISTED_MINT, filter: "USDC", fires: false, case: "a token of another mint calling itself USDC, filter USDC" },
    { token: "USDC", mint: null, filter: MINTS.USDC, fires: true, case: "native: USDC named with no mint, filter the USDC mint" },
  ])("token filter, mints exact and symbols in any case: $case → fires $fires", ({ token, mint, filter, fires }) => {
    const firing = evaluateLargeTransfer(rule("large_transfer", { token: filter }), tx({ token, mint }));
    expect(firing !== null).toBe(fires);
  });

  // Wrapped SOL is SOL in the same units: a filter naming either matches both, however the
  // transaction spells it (Helius: token SOL, mint null for a native transfer, token SOL with the
  // wrapped-SOL mint for a wrapped one; native ingest may send the mint as the token).
  it.each([
    { token: "SOL", mint: null, filter: WSOL_MINT, fires: true, case: "a native SOL transfer, filter the wrapped-SOL mint" },
    { token: "SOL", mint: WSOL_MINT, filter: "SOL", fires: true, case: "a wrapped-SOL transfer, filter SOL" },
    { token: WSOL_MINT, mint: null, filter: "SOL", fires: true, case: "native ingest naming the wrapped-SOL mint as token, filter SOL" },
    { token: WSOL_MINT, mint: null, filter: "sol", fires: true, case: "the same, filter sol in lower case" },
    { token: "mSOL", mint: MSOL_MINT, filter: WSOL_MINT, fires: false, case: "a liquid-staking token, filter the wrapped-SOL mint" },
    { token: "USDC", mint: MINTS.USDC, filter: "SOL", fires: false, case: "another token, filter SOL" },
    { token: "SOL", mint: UNLISTED_MINT, filter: "SOL", fires: false, case: "a token of another mint calling itself SOL, filter SOL" },
    { token: "SOL", mint: UNLISTED_MINT, filter: WSOL_MINT, fires: false, case: "the same, filter the wrapped-SOL mint" },
  ])("token filter, SOL and wrapped SOL as one: $case → fires $fires", ({ token, mint, filter, fires }) => {
    const firing = evaluateLargeTransfer(rule("large_transfer", { token: filter }), tx({ token, mint }));
    expect(firing !== null).toBe(fires);
  });

  it("does not fire for a rule of another condition", () => {
    expect(evaluateLargeTransfer(rule("unusual_activity", { threshold: 1 }), tx())).toBeNull();
  });
});
