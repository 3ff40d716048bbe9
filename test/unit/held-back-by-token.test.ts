// Which of a large_transfer cooldown's held-back firings its digest names (domain/held-back-by-token.ts):
// each token's largest, never compared across tokens, what the wallet sent before what it received.
import { describe, expect, it } from "vitest";
import { TOKENS_NAMED, largestOfEachToken, type TokenFiring } from "../../src/domain/held-back-by-token.ts";
import { WRAPPED_SOL_MINT } from "../../src/domain/tokens.ts";

const SOL = { token: "SOL", mint: null };
const USDC = { token: "USDC", mint: "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v" };
const JUNK = { token: "6J9xq4Vb2mTz8WqB5nP2dLs7cYhE4uGaF1oNrk2xru", mint: "6J9xq4Vb2mTz8WqB5nP2dLs7cYhE4uGaF1oNrk2xru" };
const OTHER_JUNK = { token: "GryGc8TfLq3vKmTz8WqB5nP2dLs7cYhE4uGaEDgx82", mint: "GryGc8TfLq3vKmTz8WqB5nP2dLs7cYhE4uGaEDgx82" };

let second = 0;
/** A firing recorded a second after the one before. */
const firing = (eventId: string, observed: number, sent: boolean, token: TokenFiring["token"]): TokenFiring => ({
  eventId,
  observed,
  sent,
  token,
  createdAt: new Date(Date.UTC(2026, 10, 28, 12, 0, second++)).toISOString(),
});
const ids = (firings: readonly TokenFiring[]) => firings.map((f) => f.eventId);

describe("a large_transfer digest's named firings", () => {
  it("names the larger of two firings of one token", () => {
    const { named, otherTokens } = largestOfEachToken([firing("evt_a", 1_500, true, SOL), firing("evt_b", 250_000, true, SOL), firing("evt_c", 5_000, true, SOL)]);
    expect(ids(named)).toEqual(["evt_b"]);
    expect(otherTokens).toBe(0);
  });

  it("takes native and wrapped SOL for one token, as a transaction's legs are", () => {
    const wrapped = { token: "WSOL", mint: WRAPPED_SOL_MINT };
    expect(ids(largestOfEachToken([firing("evt_native", 100, true, SOL), firing("evt_wrapped", 900, true, wrapped)]).named)).toEqual(["evt_wrapped"]);
  });

  it("never compares amounts of different tokens: the review's 50,000 SOL sent is named beside 10^12 junk units received, and first", () => {
    // An outsider's 1,000,000 junk units started the cooldown; then the drain; then 10^12 junk units.
    const { named, otherTokens } = largestOfEachToken([firing("evt_drain", 50_000, true, SOL), firing("evt_junk", 1_000_000_000_000, false, JUNK)]);
    expect(ids(named)).toEqual(["evt_drain", "evt_junk"]);
    expect(otherTokens).toBe(0);
  });

  it("names the tokens the wallet sent before the tokens it only received, whatever came first", () => {
    const { named } = largestOfEachToken([
      firing("evt_junk_in", 9e15, false, JUNK),
      firing("evt_usdc_in", 2_000_000, false, USDC),
      firing("evt_sol_out", 10, true, SOL),
      firing("evt_other_out", 1, true, OTHER_JUNK),
    ]);
    // Sent first; within each group the well-known tokens, then the order first held back.
    expect(ids(named)).toEqual(["evt_sol_out", "evt_other_out", "evt_usdc_in"]);
  });

  it("does not let a larger received transfer of a token displace a sent one of it", () => {
    // Anyone can send the wallet SOL; only its key sends SOL out.
    const { named } = largestOfEachToken([firing("evt_in", 100_000, false, SOL), firing("evt_out", 50_000, true, SOL), firing("evt_in_more", 400_000, false, SOL)]);
    expect(ids(named)).toEqual(["evt_out"]);
  });

  it("names the first of equal amounts of a token", () => {
    expect(ids(largestOfEachToken([firing("evt_first", 700, true, SOL), firing("evt_then", 700, true, SOL)]).named)).toEqual(["evt_first"]);
  });

  it("names at most three tokens and counts the others", () => {
    expect(TOKENS_NAMED).toBe(3);
    const mints = Array.from({ length: 6 }, (_, i) => ({ token: `mint${i}`, mint: `Mint${i}xq4Vb2mTz8WqB5nP2dLs7cYhE4uGaF1oNr` }));
    const firings = [firing("evt_sol", 5, true, SOL), ...mints.map((token, i) => firing(`evt_m${i}`, 10 ** (i + 6), false, token))];
    const { named, otherTokens } = largestOfEachToken(firings);
    expect(ids(named)).toEqual(["evt_sol", "evt_m0", "evt_m1"]);
    expect(otherTokens).toBe(4);
    // A token that fired twice is still one token.
    expect(largestOfEachToken([...firings, firing("evt_m0_again", 1, false, mints[0]!)]).otherTokens).toBe(4);
  });

  it("keeps a firing whose token is unknown apart from every other, and its time orders it", () => {
    const { named, otherTokens } = largestOfEachToken([firing("evt_unknown", 3, true, null), firing("evt_unknown_2", 4, true, null), firing("evt_junk", 1_000_000, true, JUNK)]);
    expect(ids(named)).toEqual(["evt_unknown", "evt_unknown_2", "evt_junk"]);
    expect(otherTokens).toBe(0);
  });

  it("names a sent well-known token before sent junk held back earlier: three junk sends first cannot push a SOL drain out of the three named", () => {
    const junk = Array.from({ length: 3 }, (_, i) => ({ token: `junk${i}`, mint: `Junk${i}xq4Vb2mTz8WqB5nP2dLs7cYhE4uGaF1oNrk` }));
    const { named, otherTokens } = largestOfEachToken([
      ...junk.map((token, i) => firing(`evt_junk${i}`, 10 ** 12, true, token)),
      firing("evt_sol_drain", 40_000, true, SOL),
      firing("evt_usdc_drain", 2_000_000, true, USDC),
    ]);
    expect(ids(named)).toEqual(["evt_sol_drain", "evt_usdc_drain", "evt_junk0"]);
    expect(otherTokens).toBe(2);
  });

  it("still names what the wallet sent before a well-known token it only received", () => {
    const { named } = largestOfEachToken([firing("evt_usdc_in", 2_000_000, false, USDC), firing("evt_junk_out", 10, true, JUNK)]);
    expect(ids(named)).toEqual(["evt_junk_out", "evt_usdc_in"]);
  });

  it("orders tokens by when each was first held back, not by the time of its largest firing", () => {
    const { named } = largestOfEachToken([
      firing("evt_usdc_small", 10, true, USDC),
      firing("evt_sol", 10, true, SOL),
      firing("evt_usdc_large", 5_000, true, USDC),
    ]);
    expect(ids(named)).toEqual(["evt_usdc_large", "evt_sol"]);
  });
});
