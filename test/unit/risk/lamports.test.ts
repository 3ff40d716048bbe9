// SOL sums to the lamport (src/domain/risk/lamports.ts): what large_outflow's sums and cut-offs
// are made with, here and in activity.lua.
import { describe, expect, it } from "vitest";
import { addSol, lamportsOf } from "../../../src/domain/risk/index.ts";

/** A lamport-exact amount as a double, the way a stored amount is read: from its decimal. */
const solOf = (lamports: bigint): number => Number(`${lamports / 1_000_000_000n}.${(lamports % 1_000_000_000n).toString().padStart(9, "0")}`);

describe("lamportsOf", () => {
  it.each([
    { sol: 0, lamports: 0 },
    { sol: 1e-9, lamports: 1 },
    { sol: 10.1, lamports: 10_100_000_000 },
    { sol: 99.99999999999999, lamports: 100_000_000_000 },
    { sol: 4_194_303.999999999, lamports: 4_194_303_999_999_999 },
  ])("$sol SOL → $lamports lamports", ({ sol, lamports }) => {
    expect(lamportsOf(sol)).toBe(lamports);
  });

  it("finds the lamport of every amount below 2^22 SOL (random amounts, most near the top)", () => {
    const top = 2 ** 22 * 1e9;
    for (let i = 0; i < 20_000; i++) {
      const lamports = BigInt(Math.floor(i % 2 ? Math.random() * top : top - Math.random() * 1e12));
      expect(BigInt(lamportsOf(solOf(lamports)))).toBe(lamports);
    }
  });
});

describe("addSol", () => {
  it("sums nine sends of 10.1 SOL and one of 9.1 to exactly 100, where doubles give 99.99999999999999", () => {
    const amounts = [...Array.from({ length: 9 }, () => 10.1), 9.1];
    expect(amounts.reduce((sum, amount) => sum + amount, 0)).toBe(99.99999999999999);
    expect(amounts.reduce(addSol, 0)).toBe(100);
  });

  it.each([
    { a: 0.1, b: 0.2, sum: 0.3 },
    { a: 99.999999999, b: 1e-9, sum: 100 },
    { a: 99.99999999999999, b: 0, sum: 100 },
  ])("$a + $b = $sum", ({ a, b, sum }) => {
    expect(addSol(a, b)).toBe(sum);
  });

  it("keeps a running sum of many lamport amounts exact (the exact total's nearest double)", () => {
    for (let trial = 0; trial < 200; trial++) {
      let exact = 0n;
      let sum = 0;
      for (let k = 0; k < 500; k++) {
        const lamports = BigInt(Math.floor(Math.random() * 2_000e9));
        exact += lamports;
        sum = addSol(sum, solOf(lamports));
      }
      expect(sum).toBe(solOf(exact));
    }
  });
});
