// large_transfer judges what the wallet moved in a transaction: its legs of one token in one
// direction count as their exact total, so a payment split into legs does not pass under the
// threshold; legs of other tokens, the other direction, or that the wallet is not on do not add.
import { describe, expect, it } from "vitest";
import { evaluateLargeTransfer, legTotals, type LegTotal } from "../../../src/domain/conditions/index.ts";
import { decimalValue, sumDecimals } from "../../../src/domain/decimal.ts";
import { WRAPPED_SOL_MINT } from "../../../src/domain/tokens.ts";
import { OTHER, THIRD, WALLET, rule, tx } from "./fixtures.ts";

const USDT_MINT = "Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB";

const usdcIn = (amount: number, from = OTHER) => tx({ amount, from, to: WALLET });
/** A total as shown (its exact decimal left out). */
const shown = (total: LegTotal | null) => total && { amount: total.amount, legs: total.legs, otherCounterparties: total.otherCounterparties };

describe("legTotals", () => {
  it("adds the wallet's legs of one token and one direction, and counts them", () => {
    const legs = [usdcIn(6_000), usdcIn(6_000, THIRD), tx({ amount: 500 })];
    expect(legTotals(WALLET, legs).map(shown)).toEqual([
      { amount: 12_000, legs: 2, otherCounterparties: 1 },
      { amount: 12_000, legs: 2, otherCounterparties: 1 },
      { amount: 500, legs: 1, otherCounterparties: 0 },
    ]);
  });

  it("keeps tokens apart by mint, and native SOL apart from wrapped SOL (a swap from SOL moves the same SOL as both)", () => {
    const sol = tx({ amount: 5, token: "SOL", mint: null, from: WALLET, to: OTHER });
    const wrapped = tx({ amount: 5, token: "SOL", mint: WRAPPED_SOL_MINT, from: WALLET, to: THIRD });
    const fakeUsdc = tx({ amount: 9_000, token: "USDC", mint: "Ejv8hcsDVq1k2gTkgLsUV4KC3CaTNEAZmpMNv9L6dKPy", from: OTHER, to: WALLET });
    const totals = legTotals(WALLET, [sol, wrapped, usdcIn(1_000), fakeUsdc]);
    expect(totals.map((total) => total?.amount)).toEqual([5, 5, 1_000, 9_000]);
    expect(evaluateLargeTransfer(rule("large_transfer", { threshold: 8 }), sol, totals[0]!)).toBeNull();
  });

  it("gives nothing for a self-transfer or a leg the wallet is not on", () => {
    expect(legTotals(WALLET, [tx({ from: WALLET, to: WALLET }), tx({ from: OTHER, to: THIRD }), usdcIn(1)]).map(shown)).toEqual([
      null,
      null,
      { amount: 1, legs: 1, otherCounterparties: 0 },
    ]);
  });

  it("adds exactly: 0.1 + 0.2 is 0.3, not 0.30000000000000004", () => {
    expect(legTotals(WALLET, [usdcIn(0.1), usdcIn(0.2)])[0]!.amount).toBe(0.3);
    expect(decimalValue(sumDecimals([10.1, 10.1, 10.1, 10.1, 10.1, 10.1, 10.1, 10.1, 10.1, 9.1]))).toBe(100);
  });
});

describe("large_transfer over the legs of one transaction", () => {
  const legs = [usdcIn(6_000), usdcIn(6_000)];
  const totals = legTotals(WALLET, legs);

  it.each([
    { threshold: 12_000, fires: true, case: "at the total" },
    { threshold: 12_000.000001, fires: false, case: "just above the total" },
    { threshold: 11_999.999999, fires: true, case: "just below the total" },
  ])("fires $case ($threshold against two legs of 6,000): $fires", ({ threshold, fires }) => {
    const firing = evaluateLargeTransfer(rule("large_transfer", { threshold }), legs[0]!, totals[0]!);
    expect(firing !== null).toBe(fires);
    if (firing) expect(firing.observed).toBe(12_000);
  });

  it("says the total and how many transfers it came in", () => {
    expect(evaluateLargeTransfer(rule("large_transfer"), legs[0]!, totals[0]!)?.reason).toBe(
      "Received 12,000 USDC from A3CbMR…ZdE6Fb in 2 transfers (threshold 10,000).",
    );
    const fromTwo = [usdcIn(6_000), usdcIn(6_000, THIRD)];
    expect(evaluateLargeTransfer(rule("large_transfer"), fromTwo[0]!, legTotals(WALLET, fromTwo)[0]!)?.reason).toBe(
      "Received 12,000 USDC from A3CbMR…ZdE6Fb and 1 other in 2 transfers (threshold 10,000).",
    );
  });

  it("judges one leg by its own amount when it is the wallet's only leg in that token", () => {
    const mixed = [usdcIn(6_000), tx({ amount: 6_000, token: "USDT", mint: USDT_MINT, from: OTHER, to: WALLET })];
    const mixedTotals = legTotals(WALLET, mixed);
    expect(mixed.map((leg, k) => evaluateLargeTransfer(rule("large_transfer"), leg, mixedTotals[k]!))).toEqual([null, null]);
  });

  it("judges the exact total, not the double nearest to it: 0.999999999999999 + 0.000000000000000999 does not reach 1", () => {
    const tiny = [usdcIn(0.999999999999999), usdcIn(0.000000000000000999)];
    const tinyTotals = legTotals(WALLET, tiny);
    expect(tinyTotals[0]!.amount).toBe(1); // what a double makes of 0.999999999999999999
    expect(evaluateLargeTransfer(rule("large_transfer", { threshold: 1 }), tiny[0]!, tinyTotals[0]!)).toBeNull();
    expect(evaluateLargeTransfer(rule("large_transfer", { threshold: 0.999999999 }), tiny[0]!, tinyTotals[0]!)).not.toBeNull();
  });

  it("does not add a failed transaction's legs: nothing moved", () => {
    const failed = [tx({ amount: 6_000, from: OTHER, to: WALLET, status: "failed" }), tx({ amount: 6_000, from: OTHER, to: WALLET, status: "failed" })];
    expect(evaluateLargeTransfer(rule("large_transfer"), failed[0]!, legTotals(WALLET, failed)[0]!)).toBeNull();
  });
});
