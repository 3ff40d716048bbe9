// What a wallet's SOL outflow sums (sidesByAddress in src/pipeline/batch-facts.ts), behind the
// large_outflow factor (README "Risk score"): SOL and wrapped SOL it sent, however a feed spells
// them, and never a token of another mint whose creator called it SOL.
import { describe, expect, it } from "vitest";
import { WRAPPED_SOL_MINT } from "../../../src/domain/tokens.ts";
import type { Transaction } from "../../../src/domain/types.ts";
import { sidesByAddress } from "../../../src/pipeline/batch-facts.ts";
import { OTHER, THIRD, WALLET, tx } from "../conditions/fixtures.ts";

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

describe("the SOL a wallet sent in one transaction of several legs", () => {
  const legs = (amounts: readonly number[]) =>
    sidesByAddress(
      amounts.map((amount, k) => ({ ...tx({ from: WALLET, to: k % 2 ? OTHER : THIRD, token: "SOL", mint: null, amount }), batchId: "bat_1" })),
      new Set([WALLET]),
    )
      .get(WALLET)!
      .events.events.map((event) => event.solSent);

  // Added as doubles the legs drift off their exact total (0.1 + 0.2 = 0.30000000000000004).
  it.each([
    { amounts: [0.1, 0.2], total: 0.3 },
    { amounts: [...Array.from({ length: 9 }, () => 10.1), 9.1], total: 100 },
    { amounts: [...Array.from({ length: 9 }, () => 10.1), 9.099999999], total: 99.999999999 },
    { amounts: [...Array.from({ length: 9 }, () => 10.1), 9.100000001], total: 100.000000001 },
  ])("sums $amounts to the lamport: $total", ({ amounts, total }) => {
    expect(legs(amounts)).toEqual([total]);
  });
});
