// A Helius delivery stores at most MAX_MOVEMENTS_PER_DELIVERY movements (native transfers, token
// transfers, compressed-NFT events; an item naming none counts 1). In the delivery's order: the
// items that fit are read as always; the first one that would take the delivery past the bound,
// and every item after it, is refused unread (none of its addresses decoded) and kept for an
// operator to post again in a smaller delivery. Items refused by the schema count nothing (they
// store nothing and were not read further); items read and refused for another reason count what
// they name (they were read: the bound is on the work of a delivery as much as on its rows).
import { describe, expect, it } from "vitest";
import type { HeliusTransaction } from "../../src/ingest/helius.ts";
import { MAX_MOVEMENTS_PER_DELIVERY, pastMovementsMessage, triageHeliusItems } from "../../src/ingest/helius-triage.ts";

const payer = "63icgRv21T39FpUXik9i1qiPayCutuDXyg5z7VFc6uDB";
const wallet = "7ty9YmokjEWGXufay9eMYmbWhFW5FnnGva1C2SEHZfvh";
const USDC = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";
const SIGNATURES = [
  "7piM728maghNweAiLp1FZMeq3n3mbXpPwSPjSSp8ur6rXh6D7uJ5n49hd4rhjwM6BZxxYHU4JjVyKFPJAF67Vog",
  "5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW",
];
const NOW = new Date((1718035201 + 86_400) * 1000);
const noSchemaIssues = () => [];

/** An item naming `natives` native transfers and `tokens` token transfers. */
const item = (natives: number, tokens = 0, over: Partial<HeliusTransaction> = {}): HeliusTransaction => ({
  signature: SIGNATURES[0]!,
  slot: 1,
  timestamp: 1718035201,
  fee: 5000,
  feePayer: payer,
  type: "TRANSFER",
  transactionError: null,
  nativeTransfers: Array.from({ length: natives }, () => ({ fromUserAccount: payer, toUserAccount: wallet, amount: 1 })),
  tokenTransfers: Array.from({ length: tokens }, () => ({ fromUserAccount: payer, toUserAccount: wallet, mint: USDC, tokenAmount: 1 })),
  ...over,
});

const past = (index: number, max: number) => [{ path: `body.${index}`, message: pastMovementsMessage(max) }];

describe("the movements one Helius delivery stores", () => {
  it("is 10,000: each item's lists hold at most 1,000 entries, so any one item fits a delivery of its own", () => {
    expect(MAX_MOVEMENTS_PER_DELIVERY).toBe(10_000);
    const full = item(1_000, 1_000, { events: { compressed: [] } });
    const { valid, refused, unread } = triageHeliusItems(Array.from({ length: 5 }, () => full), noSchemaIssues, NOW);
    // 2,000 a piece: five fill the bound exactly.
    expect([valid.length, refused.length, unread]).toEqual([5, 0, 0]);
    const { refused: sixth } = triageHeliusItems([...Array.from({ length: 5 }, () => full), item(0)], noSchemaIssues, NOW);
    expect(sixth).toEqual([{ index: 5, signature: SIGNATURES[0], errors: past(5, 10_000), item: item(0) }]);
  });

  it("reads the items up to the bound, and refuses unread the first past it and every one after, however small", () => {
    const items = [item(2), item(0), item(2, 1), item(1), item(0)];
    // 2 + 1 (none named) + 3 = 6 fit in 6; the fourth would make 7.
    const { valid, refused, unread } = triageHeliusItems(items, noSchemaIssues, NOW, [], 6);
    expect(valid).toEqual(items.slice(0, 3));
    expect(unread).toBe(2);
    expect(refused).toEqual([
      { index: 3, signature: SIGNATURES[0], errors: past(3, 6), item: items[3] },
      { index: 4, signature: SIGNATURES[0], errors: past(4, 6), item: items[4] },
    ]);
    expect(refused[0]!.errors[0]!.message).toMatch(/more than 6 movements .* post it again in a smaller delivery$/);
  });

  it("does not check the items past the bound: the first only for its shape (to count it), no address of theirs decoded", () => {
    const checked: string[] = [];
    const schema = (_value: unknown, at: string) => (checked.push(at), []);
    const badAddress = item(1, 0, { feePayer: "z".repeat(44) });
    const { refused } = triageHeliusItems([item(3), badAddress, badAddress], schema, NOW, [], 3);
    expect(checked).toEqual(["body.0", "body.1"]);
    expect(refused).toEqual([
      { index: 1, signature: SIGNATURES[0], errors: past(1, 3), item: badAddress },
      { index: 2, signature: SIGNATURES[0], errors: past(2, 3), item: badAddress },
    ]);
  });

  it("counts nothing for an item the schema refuses, and what it names for one refused after reading it", () => {
    const ahead = item(2, 0, { timestamp: Math.floor(NOW.getTime() / 1000) + 3_600, signature: SIGNATURES[1]! });
    const shapeless = { signature: SIGNATURES[1], nativeTransfers: "many" };
    const schema = (value: unknown, at: string) => (value === shapeless ? [{ path: `${at}.nativeTransfers`, message: "must be array,null" }] : []);
    const { valid, refused } = triageHeliusItems([shapeless, ahead, item(1), item(1)], schema, NOW, [], 3);
    expect(valid).toEqual([item(1)]);
    // 0 + 2 + 1 = 3 fit in 3; the fourth would make 4.
    expect(refused.map(({ index, errors }) => [index, errors.map((error) => error.path)])).toEqual([
      [0, ["body.0.nativeTransfers"]],
      [1, ["body.1.timestamp"]],
      [3, ["body.3"]],
    ]);
    expect(refused[2]!.errors).toEqual(past(3, 3));
  });

  it("keeps an item refused past the bound with its lamports as read, so that posted again it is stored as it would have been, and its token amounts' digits", () => {
    // JSON.parse made 10000000000000000 of 10000000000000001 lamports (taken so: within a
    // lamport) and 10 of a tokenAmount of 9.99999999999999999 (refused for it, once read).
    const read = { ...item(1, 1), fee: 10000000000000000 };
    read.nativeTransfers![0]!.amount = 10000000000000000;
    read.tokenTransfers![0]!.tokenAmount = 10;
    const literals = [
      { item: 1, field: "nativeTransfers.0.amount", literal: "10000000000000001" },
      { item: 1, field: "tokenTransfers.0.tokenAmount", literal: "9.99999999999999999" },
      { item: 1, field: "fee", literal: "10000000000000001" },
    ];
    const { refused } = triageHeliusItems([item(1), read], noSchemaIssues, NOW, literals, 2);
    expect(refused).toHaveLength(1);
    const kept = refused[0]!.item as HeliusTransaction;
    expect([kept.nativeTransfers![0]!.amount, kept.fee, kept.tokenTransfers![0]!.tokenAmount]).toEqual([10000000000000000, 10000000000000000, "9.99999999999999999"]);
  });

  it("keeps an item refused for another reason (its timestamp) with its lamports as read too, so that posted again once mended it is stored, not refused for a lamport string", () => {
    const read = { ...item(1), fee: 10000000000000000, timestamp: NOW.getTime() / 1000 + 3_600 };
    read.nativeTransfers![0]!.amount = 9007199254740992;
    const literals = [
      { item: 0, field: "nativeTransfers.0.amount", literal: "9007199254740993" },
      { item: 0, field: "fee", literal: "10000000000000001" },
    ];
    const { refused } = triageHeliusItems([read], noSchemaIssues, NOW, literals);
    expect(refused.map(({ errors }) => errors.map((error) => error.path))).toEqual([["body.0.timestamp"]]);
    const kept = refused[0]!.item as HeliusTransaction;
    expect([kept.nativeTransfers![0]!.amount, kept.fee]).toEqual([9007199254740992, 10000000000000000]);
  });
});
