// What a wallet's SOL outflow sums (sidesByAddress in src/pipeline/batch-facts.ts), behind the
// large_outflow factor (README "Risk score"): SOL and wrapped SOL it sent, however a feed spells
// them, and never a token of another mint whose creator called it SOL.
import { describe, expect, it } from "vitest";
import { WRAPPED_SOL_MINT } from "../../../src/domain/tokens.ts";
import type { Transaction } from "../../../src/domain/types.ts";
import { sidesByAddress } from "../../../src/pipeline/batch-facts.ts";
import { OTHER, WALLET, tx } from "../conditions/fixtures.ts";

const IMPOSTOR_MINT = "Ejv8hcsDVq1k2gTkgLsUV4KC3CaTNEAZmpMNv9L6dKPy";
const solSentOf = (overrides: Partial<Transaction>) =>
  sidesByAddress([{ ...tx({ from: WALLET, to: OTHER, amount: 5_000, ...overrides }), batchId: "bat_1" }], new Set([WALLET]))
    .get(WALLET)!
    .events.events.map((event) => event.solSent);

describe("the SOL a wallet sent", () => {
  it.each([
    { case: "native SOL", token: "SOL", mint: null, solSent: 5_000 },
    { case: "wrapped SOL", token: "SOL", mint: WRAPPED_SOL_MINT, solSent: 5_000 },
    { case: "a token of another mint calling itself SOL", token: "SOL", mint: IMPOSTOR_MINT, solSent: 0 },
    { case: "USDC", token: "USDC", mint: "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v", solSent: 0 },
  ])("$case → $solSent", ({ token, mint, solSent }) => {
    expect(solSentOf({ token, mint })).toEqual([solSent]);
  });
});
