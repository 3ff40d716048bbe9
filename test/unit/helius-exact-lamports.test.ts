// Lamports (native transfers, the fee) are taken whatever their size: a double holds SOL to the
// lamport below 2^23 SOL (8,388,608), and holds a larger transfer within a lamport or two.
// Refusing such an item dropped the largest transfers before any alert saw them.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { heliusItemAmountIssues } from "../../src/ingest/helius-issues.ts";
import { LAMPORTS_PER_SOL, mapHeliusTransaction, type HeliusTransaction } from "../../src/ingest/helius.ts";
import { triageHeliusItems } from "../../src/ingest/helius-triage.ts";

const SIGNATURE = "7piM728maghNweAiLp1FZMeq3n3mbXpPwSPjSSp8ur6rXh6D7uJ5n49hd4rhjwM6BZxxYHU4JjVyKFPJAF67Vog";
const payer = "63icgRv21T39FpUXik9i1qiPayCutuDXyg5z7VFc6uDB";
const wallet = "7ty9YmokjEWGXufay9eMYmbWhFW5FnnGva1C2SEHZfvh";
const NOW = new Date((1718035201 + 86_400) * 1000);

const item = (lamports: number[], fee = 5000): HeliusTransaction => ({
  signature: SIGNATURE,
  slot: 1,
  timestamp: 1718035201,
  fee,
  feePayer: payer,
  type: "TRANSFER",
  transactionError: null,
  nativeTransfers: lamports.map((amount) => ({ fromUserAccount: payer, toUserAccount: wallet, amount })),
  tokenTransfers: [],
});

describe("Helius lamports", () => {
  it("takes every amount and fee, whale transfers and literals past 2^53 included", () => {
    const whale = item([9_000_000_000_000_001, 25_000_000_000_000_000], 9_000_000_000_000_001);
    const literals = new Map([["nativeTransfers.0.amount", "10000000000000001"]]);
    expect(heliusItemAmountIssues(whale, "body.0", literals)).toEqual([]);
    const { valid, refused } = triageHeliusItems([whale], () => [], NOW, [{ item: 0, field: "nativeTransfers.0.amount", literal: "10000000000000001" }]);
    expect({ valid: valid.length, refused }).toEqual({ valid: 1, refused: [] });
  });

  it("stores a SOL amount below 2^23 SOL to the lamport, and a larger one within a lamport of the decimal sent", () => {
    const [exact] = mapHeliusTransaction(item([8_388_607_999_999_999], 8_388_607_999_999_999));
    expect(String(exact!.amount)).toBe("8388607.999999999");
    expect(String(exact!.fee)).toBe("8388607.999999999");
    fc.assert(
      fc.property(fc.integer({ min: 2 ** 23 * LAMPORTS_PER_SOL, max: Number.MAX_SAFE_INTEGER }), (lamports) => {
        const [row] = mapHeliusTransaction(item([lamports]));
        expect(Math.abs(row!.amount * LAMPORTS_PER_SOL - lamports)).toBeLessThanOrEqual(2);
      }),
      { numRuns: 2_000 },
    );
  });
});
