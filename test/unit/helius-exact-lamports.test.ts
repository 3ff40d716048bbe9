// Lamports (native transfers, the fee) are stored as SOL, to the last digit, or their item is
// refused: a double holds a 9-decimal SOL amount exactly only below 2^23 SOL, and a lamport
// literal only up to 2^53. 9000000000000001 lamports were stored as 9000000.000000002 SOL and
// fired a large_transfer at 9000000.000000002 the transfer never reached.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isExactAsDouble } from "../../src/domain/decimal.ts";
import { heliusItemAmountIssues, solDecimal } from "../../src/ingest/helius-issues.ts";
import { LAMPORTS_PER_SOL, mapHeliusTransaction, type HeliusTransaction } from "../../src/ingest/helius.ts";
import { triageHeliusItems } from "../../src/ingest/helius-triage.ts";

const SIGNATURE = "7piM728maghNweAiLp1FZMeq3n3mbXpPwSPjSSp8ur6rXh6D7uJ5n49hd4rhjwM6BZxxYHU4JjVyKFPJAF67Vog";
const payer = "63icgRv21T39FpUXik9i1qiPayCutuDXyg5z7VFc6uDB";
const wallet = "7ty9YmokjEWGXufay9eMYmbWhFW5FnnGva1C2SEHZfvh";
const NOW = new Date((1718035201 + 86_400) * 1000);
const LITERAL_MESSAGE = "has more significant digits than the service keeps exactly (about 15); it would be judged as a rounded amount";
const solMessage = (sol: string) =>
  `is ${sol} SOL, which has more significant digits than the service keeps exactly (about 15); it would be judged as a rounded amount`;

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

describe("solDecimal", () => {
  it.each([
    [0, "0"],
    [1, "0.000000001"],
    [5000, "0.000005"],
    [1_500_000_000, "1.5"],
    [25_000_000_000_000_000, "25000000"],
    [9_000_000_000_000_001, "9000000.000000001"],
  ])("writes %d lamports as %s SOL", (lamports, sol) => {
    expect(solDecimal(lamports)).toBe(sol);
  });

  it("gives what the division gives whenever a double holds the decimal, so the rows keep dividing", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }), (lamports) => {
        const sol = solDecimal(lamports);
        if (isExactAsDouble(sol)) expect(lamports / LAMPORTS_PER_SOL).toBe(Number(sol));
      }),
      { numRuns: 5_000 },
    );
  });
});

describe("heliusItemAmountIssues on lamports", () => {
  it("takes every amount below 2^23 SOL, and 2^23 SOL itself", () => {
    const amounts = [1, 8_388_607_999_999_999, 8_388_608_000_000_000, 1_234_567_123_456_789];
    expect(heliusItemAmountIssues(item(amounts, 8_388_607_999_999_999), "body.0")).toEqual([]);
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 23 * LAMPORTS_PER_SOL }), (lamports) => {
        expect(heliusItemAmountIssues(item([lamports], lamports), "body.0")).toEqual([]);
      }),
      { numRuns: 5_000 },
    );
  });

  it("refuses a native transfer or fee whose SOL value a double rounds, naming the path and the SOL amount", () => {
    expect(heliusItemAmountIssues(item([1_500_000_000, 9_000_000_000_000_001], 9_000_000_000_000_001), "body.2")).toEqual([
      { path: "body.2.fee", message: solMessage("9000000.000000001") },
      { path: "body.2.nativeTransfers.1.amount", message: solMessage("9000000.000000001") },
    ]);
  });

  it("takes lamports above 2^53 whose literal and SOL value a double holds (25,000,000 SOL)", () => {
    expect(heliusItemAmountIssues(item([25_000_000_000_000_000]), "body.0")).toEqual([]);
  });

  it("refuses lamports whose literal a double rounded, with the message any such number gets", () => {
    // JSON.parse read 10000000000000001 as 10000000000000000: 10,000,000 SOL, a double holds it.
    const rounded = item([10_000_000_000_000_000], 10_000_000_000_000_000);
    const literals = new Map([
      ["fee", "10000000000000001"],
      ["nativeTransfers.0.amount", "10000000000000001"],
    ]);
    expect(heliusItemAmountIssues(rounded, "body.0", literals)).toEqual([
      { path: "body.0.fee", message: LITERAL_MESSAGE },
      { path: "body.0.nativeTransfers.0.amount", message: LITERAL_MESSAGE },
    ]);
  });
});

describe("triageHeliusItems with lamports a double rounds", () => {
  it("refuses those items only, keeps a rounded literal's digits as its string, and takes the rest", () => {
    const ordinary = item([1_500_000_000]);
    const solRounded = item([9_000_000_000_000_001]);
    const literalRounded = item([1_500_000_000, 10_000_000_000_000_000], 10_000_000_000_000_000);
    const inexact = [
      { item: 2, field: "nativeTransfers.1.amount", literal: "10000000000000001" },
      { item: 2, field: "fee", literal: "10000000000000001" },
    ];
    const { valid, refused } = triageHeliusItems([ordinary, solRounded, literalRounded], () => [], NOW, inexact);
    expect(valid).toEqual([ordinary]);
    expect(refused).toEqual([
      {
        index: 1,
        signature: SIGNATURE,
        errors: [{ path: "body.1.nativeTransfers.0.amount", message: solMessage("9000000.000000001") }],
        // Its literal is exact: the number is what was sent.
        item: solRounded,
      },
      {
        index: 2,
        signature: SIGNATURE,
        errors: [
          { path: "body.2.fee", message: LITERAL_MESSAGE },
          { path: "body.2.nativeTransfers.1.amount", message: LITERAL_MESSAGE },
        ],
        item: {
          ...literalRounded,
          fee: "10000000000000001",
          nativeTransfers: [literalRounded.nativeTransfers![0], { ...literalRounded.nativeTransfers![1], amount: "10000000000000001" }],
        },
      },
    ]);
    // The item as parsed is left as it was.
    expect(literalRounded.fee).toBe(10_000_000_000_000_000);
  });

  it("stores the SOL amount of an accepted item as the decimal sent", () => {
    const [row] = mapHeliusTransaction(item([8_388_607_999_999_999], 8_388_607_999_999_999));
    expect(String(row!.amount)).toBe("8388607.999999999");
    expect(String(row!.fee)).toBe("8388607.999999999");
  });
});
