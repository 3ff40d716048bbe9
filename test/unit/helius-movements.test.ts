// What a Helius item's movements are beyond its non-zero transfers: transfers of amount 0
// (address poisoning), compressed NFTs (events.compressed), a tokenAmount sent as a string;
// and how a delivery is split into the items stored and those refused.
import { describe, expect, it } from "vitest";
import { heliusItemAddressIssues } from "../../src/ingest/helius-issues.ts";
import { mapHeliusTransaction, type HeliusTransaction } from "../../src/ingest/helius.ts";
import { MAX_ERRORS_PER_ITEM, triageHeliusItems } from "../../src/ingest/helius-triage.ts";

const SIGNATURE = "7piM728maghNweAiLp1FZMeq3n3mbXpPwSPjSSp8ur6rXh6D7uJ5n49hd4rhjwM6BZxxYHU4JjVyKFPJAF67Vog";
const payer = "63icgRv21T39FpUXik9i1qiPayCutuDXyg5z7VFc6uDB";
const wallet = "7ty9YmokjEWGXufay9eMYmbWhFW5FnnGva1C2SEHZfvh";
const other = "CqxpscBsd28Zdz5UwVPdzG8x2Nap5G8hyLWWfoM38BBz";
const tree = "DHvTBxtmNA1iP3AWQgdB2TDYLV8h6bYVSU8uMz8qUmRK";
const asset = "BF2eY47GGXj8kJP8fQcaj2HWzcETYoSAY9XPG6mBLpM6";
const USDC = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";

const item = (over: Partial<HeliusTransaction>): HeliusTransaction => ({
  signature: SIGNATURE,
  slot: 1,
  timestamp: 1718035201,
  fee: 5000,
  feePayer: payer,
  type: "TRANSFER",
  transactionError: null,
  nativeTransfers: [],
  tokenTransfers: [],
  ...over,
});

const legsOf = (tx: HeliusTransaction) =>
  mapHeliusTransaction(tx).map(({ leg, from, to, amount, token, mint }) => ({ leg, from, to, amount, token, mint }));

describe("transfers of amount 0", () => {
  it("keeps a 0 SOL transfer with its real sides instead of a transfer of the fee payer to itself", () => {
    expect(legsOf(item({ nativeTransfers: [{ fromUserAccount: payer, toUserAccount: wallet, amount: 0 }] }))).toEqual([
      { leg: 0, from: payer, to: wallet, amount: 0, token: "SOL", mint: null },
    ]);
  });

  it("keeps a 0-amount token transfer with its sides", () => {
    const tx = item({ tokenTransfers: [{ fromUserAccount: other, toUserAccount: wallet, mint: USDC, tokenAmount: 0 }] });
    expect(legsOf(tx)).toEqual([{ leg: 0, from: other, to: wallet, amount: 0, token: "USDC", mint: USDC }]);
  });

  it("never makes a zero transfer the principal while another moved something; the zero ones follow in Helius's order", () => {
    const tx = item({
      type: "UNKNOWN",
      nativeTransfers: [
        { fromUserAccount: payer, toUserAccount: wallet, amount: 0 },
        { fromUserAccount: payer, toUserAccount: other, amount: 2_000_000_000 },
      ],
      // A token-first type would take the first token transfer: not this one, it moved nothing.
      tokenTransfers: [{ fromUserAccount: payer, toUserAccount: wallet, mint: USDC, tokenAmount: 0 }],
    });
    expect(legsOf(tx).map(({ to, amount, token }) => [to, amount, token])).toEqual([
      [other, 2, "SOL"],
      [wallet, 0, "SOL"],
      [wallet, 0, "USDC"],
    ]);
    const transfer = item({
      tokenTransfers: [
        { fromUserAccount: payer, toUserAccount: wallet, mint: USDC, tokenAmount: 0 },
        { fromUserAccount: payer, toUserAccount: other, mint: USDC, tokenAmount: 5 },
      ],
    });
    expect(legsOf(transfer).map(({ to, amount }) => [to, amount])).toEqual([
      [other, 5],
      [wallet, 0],
    ]);
  });

  it("still leaves out a token's plumbing, and keeps a 0 SOL transfer to oneself as native ingest does", () => {
    const tx = item({
      nativeTransfers: [
        { fromUserAccount: payer, toUserAccount: "HY8pyZGQdzEMhfhLkfEzpSAeEHHXXmf7Gu7vTpS3Pftg", amount: 0 },
        { fromUserAccount: payer, toUserAccount: payer, amount: 0 },
      ],
      tokenTransfers: [
        { fromUserAccount: payer, toUserAccount: wallet, fromTokenAccount: "HY8pyZGQdzEMhfhLkfEzpSAeEHHXXmf7Gu7vTpS3Pftg", toTokenAccount: other, mint: USDC, tokenAmount: 3 },
      ],
    });
    expect(legsOf(tx).map(({ from, to, amount, token }) => [from, to, amount, token])).toEqual([
      [payer, wallet, 3, "USDC"],
      [payer, payer, 0, "SOL"],
    ]);
  });
});

describe("compressed NFTs (events.compressed)", () => {
  const compressed = (event: Record<string, unknown>) => ({ events: { compressed: [{ treeId: tree, assetId: asset, ...event }] } }) as Partial<HeliusTransaction>;

  it("maps a transfer to 1 of the asset from the old leaf owner to the new one", () => {
    const tx = item({ type: "COMPRESSED_NFT_TRANSFER", ...compressed({ type: "COMPRESSED_NFT_TRANSFER", leafIndex: 7, oldLeafOwner: other, newLeafOwner: wallet }) });
    expect(mapHeliusTransaction(tx)).toEqual([expect.objectContaining({ leg: 0, type: "nft", from: other, to: wallet, amount: 1, token: asset, mint: asset })]);
  });

  it("maps a mint from the tree and a burn to the tree", () => {
    const minted = item({ type: "COMPRESSED_NFT_MINT", ...compressed({ oldLeafOwner: null, newLeafOwner: wallet }) });
    expect(legsOf(minted)[0]).toMatchObject({ from: tree, to: wallet });
    const burned = item({ type: "COMPRESSED_NFT_BURN", ...compressed({ oldLeafOwner: wallet, newLeafOwner: "" }) });
    expect(legsOf(burned)[0]).toMatchObject({ from: wallet, to: tree });
  });

  it("puts a compressed NFT sale's price first and the NFT after it, and the events after the token transfers", () => {
    const tx = item({
      type: "COMPRESSED_NFT_SALE",
      nativeTransfers: [{ fromUserAccount: wallet, toUserAccount: other, amount: 4_000_000_000 }],
      tokenTransfers: [{ fromUserAccount: wallet, toUserAccount: other, mint: USDC, tokenAmount: 1 }],
      ...compressed({ oldLeafOwner: other, newLeafOwner: wallet }),
    });
    expect(legsOf(tx).map(({ from, to, amount, token }) => [from, to, amount, token])).toEqual([
      [wallet, other, 4, "SOL"],
      [wallet, other, 1, "USDC"],
      [other, wallet, 1, asset],
    ]);
  });

  it("checks the decoded length of the event's addresses", () => {
    const tx = item({ ...compressed({ oldLeafOwner: "z".repeat(44), newLeafOwner: null }) });
    expect(heliusItemAddressIssues(tx, "body.2")).toEqual([
      { path: "body.2.events.compressed.0.oldLeafOwner", message: "must be a Solana address (base58 of 32 bytes)" },
    ]);
  });
});

describe("tokenAmount as a string", () => {
  it("reads a decimal string as the number it writes", () => {
    const tx = item({ tokenTransfers: [{ fromUserAccount: payer, toUserAccount: wallet, mint: USDC, tokenAmount: "2500.75" }] });
    expect(legsOf(tx)[0]).toMatchObject({ amount: 2500.75, token: "USDC" });
  });
});

describe("triageHeliusItems", () => {
  const noSchemaIssues = () => [];
  /** A day after the items' block time. */
  const NOW = new Date((1718035201 + 86_400) * 1000);

  it("refuses an item dated more than 10 minutes ahead of the clock, and takes one 10 minutes ahead", () => {
    const ahead = (seconds: number) => item({ timestamp: Math.floor(NOW.getTime() / 1000) + seconds });
    const { valid, refused } = triageHeliusItems([ahead(600), ahead(601)], noSchemaIssues, NOW);
    expect(valid).toHaveLength(1);
    expect(refused).toMatchObject([{ index: 1, errors: [{ path: "body.1.timestamp", message: expect.stringMatching(/^is 601 seconds ahead of this server's clock/) }] }]);
  });

  it("keeps the valid items and refuses the others with their index, readable signature and errors", () => {
    const bad = item({ feePayer: "z".repeat(44) });
    const { valid, refused } = triageHeliusItems(
      [item({}), bad, { signature: "not base58 0OIl" }],
      (value, at) => ((value as { slot?: unknown }).slot === undefined ? [{ path: `${at}.slot`, message: "is required" }] : []),
      NOW,
    );
    expect(valid).toHaveLength(1);
    expect(refused).toEqual([
      { index: 1, signature: SIGNATURE, errors: [{ path: "body.1.feePayer", message: "must be a Solana address (base58 of 32 bytes)" }], item: bad },
      { index: 2, signature: null, errors: [{ path: "body.2.slot", message: "is required" }], item: { signature: "not base58 0OIl" } },
    ]);
  });

  describe("a tokenAmount number whose literal a double rounds (inexactNumbers, read from the body)", () => {
    const transfer = (tokenAmount: number | string) => ({ fromUserAccount: payer, toUserAccount: wallet, mint: USDC, tokenAmount });
    // JSON.parse made 10 of 9.99999999999999999 and 100000000 of 99999999.999999999.
    const rounded = item({ tokenTransfers: [transfer(1), transfer(10), transfer(100_000_000)] });
    const inexact = [
      { item: 1, field: "tokenTransfers.1.tokenAmount", literal: "9.99999999999999999" },
      { item: 1, field: "tokenTransfers.2.tokenAmount", literal: "99999999.999999999" },
    ];
    const MESSAGE = "has more significant digits than the service keeps exactly (about 15); it would be judged as a rounded amount";

    it("refuses the item as it refuses the same digits in a string, keeps the literals' digits as strings, and takes the rest", () => {
      const asString = item({ tokenTransfers: [transfer("9.99999999999999999")] });
      const exactString = item({ tokenTransfers: [transfer("5")] });
      // A verdict counts only at a number: none where the item has no such transfer, nor at a string.
      const stray = [
        { item: 0, field: "tokenTransfers.0.tokenAmount", literal: "1e-400" },
        { item: 3, field: "tokenTransfers.0.tokenAmount", literal: "1e-400" },
      ];
      const { valid, refused } = triageHeliusItems([item({}), rounded, asString, exactString], noSchemaIssues, NOW, [...inexact, ...stray]);
      expect(valid).toEqual([item({}), exactString]);
      expect(refused).toEqual([
        {
          index: 1,
          signature: SIGNATURE,
          errors: [
            { path: "body.1.tokenTransfers.1.tokenAmount", message: MESSAGE },
            { path: "body.1.tokenTransfers.2.tokenAmount", message: MESSAGE },
          ],
          item: { ...rounded, tokenTransfers: [transfer(1), transfer("9.99999999999999999"), transfer("99999999.999999999")] },
        },
        { index: 2, signature: SIGNATURE, errors: [{ path: "body.2.tokenTransfers.0.tokenAmount", message: MESSAGE }], item: asString },
      ]);
      // The item as parsed is left as it was.
      expect(rounded.tokenTransfers![1]!.tokenAmount).toBe(10);
    });

    it("keeps the literal's digits of an item refused for another reason too", () => {
      const { refused } = triageHeliusItems([item({}), rounded], (_value, at) => [{ path: `${at}.slot`, message: "is required" }], NOW, inexact);
      expect(refused[1]).toMatchObject({ errors: [{ path: "body.1.slot", message: "is required" }] });
      expect((refused[1]!.item as HeliusTransaction).tokenTransfers![1]!.tokenAmount).toBe("9.99999999999999999");
    });
  });

  it(`lists at most ${MAX_ERRORS_PER_ITEM} errors of an item, then says how many more`, () => {
    const many = item({ nativeTransfers: Array.from({ length: 30 }, () => ({ fromUserAccount: "z".repeat(44), toUserAccount: wallet, amount: 1 })) });
    const [refused] = triageHeliusItems([many], noSchemaIssues, NOW).refused;
    expect(refused!.errors).toHaveLength(MAX_ERRORS_PER_ITEM + 1);
    expect(refused!.errors.at(-1)).toEqual({ path: "body.0", message: "has 10 more problems not listed" });
  });
});
