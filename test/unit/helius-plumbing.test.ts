// Native (SOL) transfers into or out of a token account (src/ingest/helius-plumbing.ts): left
// out only when they serve the account's own user (a wrap, one's own rent, a close), stored as
// a movement to or from that user otherwise; and a native transfer's empty side refused rather
// than guessed. The attack shapes are the security review's of 2026-11-28.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { EMPTY_NATIVE_SIDE_MESSAGE } from "../../src/ingest/helius-issues.ts";
import { LAMPORTS_PER_SOL, mapHeliusTransaction, type HeliusTokenTransfer, type HeliusTransaction } from "../../src/ingest/helius.ts";
import { triageHeliusItems } from "../../src/ingest/helius-triage.ts";

const SIGNATURE = "7piM728maghNweAiLp1FZMeq3n3mbXpPwSPjSSp8ur6rXh6D7uJ5n49hd4rhjwM6BZxxYHU4JjVyKFPJAF67Vog";
const hot = "63icgRv21T39FpUXik9i1qiPayCutuDXyg5z7VFc6uDB";
const attacker = "7ty9YmokjEWGXufay9eMYmbWhFW5FnnGva1C2SEHZfvh";
const attackerAccount = "CqxpscBsd28Zdz5UwVPdzG8x2Nap5G8hyLWWfoM38BBz";
const hotAccount = "DHvTBxtmNA1iP3AWQgdB2TDYLV8h6bYVSU8uMz8qUmRK";
const elsewhere = "HY8pyZGQdzEMhfhLkfEzpSAeEHHXXmf7Gu7vTpS3Pftg";
const WSOL = "So11111111111111111111111111111111111111112";
const USDC = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";

const item = (over: Partial<HeliusTransaction>): HeliusTransaction => ({
  signature: SIGNATURE,
  slot: 1,
  timestamp: 1718035201,
  fee: 5000,
  feePayer: hot,
  type: "TRANSFER",
  transactionError: null,
  nativeTransfers: [],
  tokenTransfers: [],
  ...over,
});

const sol = (from: string | null, to: string | null, amount: number) => ({ fromUserAccount: from, toUserAccount: to, amount: amount * LAMPORTS_PER_SOL });

/** A token transfer of `amount` from `fromUser`'s account `fromAccount` to `toUser`'s account `toAccount`. */
const token = (fromUser: string, fromAccount: string, toUser: string, toAccount: string, amount = 0.000000001, mint = WSOL): HeliusTokenTransfer => ({
  fromUserAccount: fromUser,
  toUserAccount: toUser,
  fromTokenAccount: fromAccount,
  toTokenAccount: toAccount,
  mint,
  tokenAmount: amount,
});

/** The item's SOL legs (native ones: no mint), as [from, to, amount]. */
const solLegs = (tx: HeliusTransaction) =>
  mapHeliusTransaction(tx)
    .filter((row) => row.token === "SOL" && row.mint === null)
    .map((row) => [row.from, row.to, row.amount]);

describe("SOL sent into someone else's token account beside a dust token transfer (the review's drain)", () => {
  it("stores 40,000 SOL into the attacker's token account as sent to the attacker, the dust leg being the attacker's own", () => {
    const drain = item({
      nativeTransfers: [sol(hot, attackerAccount, 40_000)],
      tokenTransfers: [token(attacker, elsewhere, attacker, attackerAccount)],
    });
    expect(solLegs(drain)).toEqual([[hot, attacker, 40_000]]);
  });

  it("stores it as sent to the attacker when the dust comes from the hot wallet too, in wrapped SOL or in USDC", () => {
    for (const mint of [WSOL, USDC]) {
      const drain = item({
        nativeTransfers: [sol(hot, attackerAccount, 10_000)],
        tokenTransfers: [token(hot, hotAccount, attacker, attackerAccount, 0.000001, mint)],
      });
      expect(solLegs(drain)).toEqual([[hot, attacker, 10_000]]);
    }
  });

  it("stores SOL taken out of the hot wallet's token account by a close to someone else as sent by the hot wallet", () => {
    const closedAway = item({
      nativeTransfers: [sol(hotAccount, attacker, 5_000)],
      tokenTransfers: [token(hot, hotAccount, attacker, attackerAccount)],
    });
    expect(solLegs(closedAway)).toEqual([[hot, attacker, 5_000]]);
  });

  it("keeps the token account's address as the side when no token transfer gives that account a user", () => {
    const unowned = item({
      nativeTransfers: [sol(hot, attackerAccount, 40_000)],
      tokenTransfers: [{ fromUserAccount: "", toUserAccount: null, fromTokenAccount: "", toTokenAccount: attackerAccount, mint: USDC, tokenAmount: 1 }],
    });
    expect(solLegs(unowned)).toEqual([[hot, attackerAccount, 40_000]]);
  });

  it("never takes for plumbing a token account the token transfers give two users, and shows the SOL between the two", () => {
    // Wrapped into the hot wallet's own account, whose owner is then changed to the attacker, who closes it.
    const handedOver = item({
      nativeTransfers: [sol(hot, hotAccount, 40_000), sol(hotAccount, attacker, 40_000)],
      tokenTransfers: [token(hot, hotAccount, hot, elsewhere), token(attacker, hotAccount, attacker, elsewhere)],
    });
    expect(solLegs(handedOver)).toEqual([
      [hot, attacker, 40_000],
      [hot, attacker, 40_000],
    ]);
  });
});

describe("a token's plumbing: SOL that serves the token account's own user", () => {
  it("leaves out SOL wrapped into one's own wrapped-SOL account, its rent, and the close back to oneself", () => {
    const wrapAndPay = item({
      nativeTransfers: [sol(hot, hotAccount, 0.2), sol(hot, hotAccount, 0.00203928), sol(hotAccount, hot, 0.00203928)],
      tokenTransfers: [token(hot, hotAccount, attacker, attackerAccount, 0.2)],
    });
    expect(solLegs(wrapAndPay)).toEqual([]);
    expect(mapHeliusTransaction(wrapAndPay)).toMatchObject([{ leg: 0, from: hot, to: attacker, amount: 0.2, token: "SOL", mint: WSOL }]);
  });

  it("leaves out the rent of one's own new token account that receives a token", () => {
    const ownNewAccount = item({
      nativeTransfers: [sol(hot, hotAccount, 0.00203928)],
      tokenTransfers: [token(attacker, attackerAccount, hot, hotAccount, 5, USDC)],
    });
    expect(solLegs(ownNewAccount)).toEqual([]);
  });

  it("stores the rent a payer puts into a recipient's new token account as a small SOL leg to the recipient, theirs to reclaim", () => {
    const payment = item({
      nativeTransfers: [sol(hot, attackerAccount, 0.00203928)],
      tokenTransfers: [token(hot, hotAccount, attacker, attackerAccount, 2500.75, USDC)],
    });
    expect(mapHeliusTransaction(payment).map(({ leg, from, to, amount, token }) => [leg, from, to, amount, token])).toEqual([
      [0, hot, attacker, 2500.75, "USDC"],
      [1, hot, attacker, 0.00203928, "SOL"],
    ]);
  });

  // Published Helius output (test/fixtures/helius/published): every wrap, rent and close in it
  // serves its own user, so none of them becomes a leg.
  const published = (name: string): HeliusTransaction[] => {
    const value = JSON.parse(readFileSync(new URL(`../fixtures/helius/published/${name}.json`, import.meta.url), "utf8")) as HeliusTransaction | HeliusTransaction[];
    return Array.isArray(value) ? value : [value];
  };

  it("leaves out every wrap, rent and close of the published wrapped-SOL buy and sell", () => {
    const [buy, sell] = published("launchpad-wsol-buy-sell") as [HeliusTransaction, HeliusTransaction];
    expect(buy.nativeTransfers).toHaveLength(4);
    expect(sell.nativeTransfers).toHaveLength(2);
    expect(solLegs(buy)).toEqual([]);
    expect(solLegs(sell)).toEqual([]);
  });

  it("leaves out the rent of the buyer's own new token account in Helius's documented NFT sale, and keeps its four payments", () => {
    const [sale] = published("docs-webhook-nft-sale") as [HeliusTransaction];
    const buyer = "CKs1E69a2e9TmH4mKKLrXFF8kD3ZnwKjoEuXa6sz9WqX";
    expect(sale.nativeTransfers).toContainEqual({ amount: 2039280, fromUserAccount: buyer, toUserAccount: "DTYuh7gAGGZg2okM7hdFfU1yMY9LUemCiPyD5Z5GCs6Z" });
    expect(solLegs(sale).map(([, to, amount]) => [to, amount])).toEqual([
      ["AAaTGaA3uVqikfVEwoSG7EwkCb4bBDsMEyueiVUS5CaU", 72.936],
      ["D8TxfGwdu9MiNMoJmUoC9wQfNfNT7Lnm6DzifQHRTy6B", 0.00201144],
      ["5DxD5ViWjvRZEkxQEaJHZw2sBsso6xoXx3wGFNKgXUzE", 71.856],
      ["rFqFJ9g7TGBD8Ed7TPDnvGKZ5pWLPDyxLcvcH2eRCtt", 1.08],
    ]);
  });
});

describe("a native transfer with an empty side", () => {
  const NOW = new Date((1718035201 + 86_400) * 1000);
  const noSchemaIssues = () => [];

  it("refuses the item, naming the empty field, instead of storing the fee payer's send as a transfer to itself", () => {
    const unnamed = item({ nativeTransfers: [sol(hot, "", 10_000)] });
    const fromNobody = item({ nativeTransfers: [sol(attacker, hot, 1), sol(null, hot, 1)] });
    const { valid, refused } = triageHeliusItems([item({ nativeTransfers: [sol(hot, attacker, 1)] }), unnamed, fromNobody], noSchemaIssues, NOW);
    expect(valid).toHaveLength(1);
    expect(refused).toEqual([
      { index: 1, signature: SIGNATURE, errors: [{ path: "body.1.nativeTransfers.0.toUserAccount", message: EMPTY_NATIVE_SIDE_MESSAGE }], item: unnamed },
      { index: 2, signature: SIGNATURE, errors: [{ path: "body.2.nativeTransfers.1.fromUserAccount", message: EMPTY_NATIVE_SIDE_MESSAGE }], item: fromNobody },
    ]);
  });

  it("is never given a side by the mapping", () => {
    expect(() => mapHeliusTransaction(item({ nativeTransfers: [sol(hot, "", 10_000)] }))).toThrow(/empty side/);
  });

  it("still takes a token transfer's empty side as a mint or a burn, the mint standing in", () => {
    const minted = item({ tokenTransfers: [{ fromUserAccount: "", toUserAccount: attacker, mint: USDC, tokenAmount: 5 }] });
    expect(triageHeliusItems([minted], noSchemaIssues, NOW).valid).toEqual([minted]);
    expect(mapHeliusTransaction(minted)).toMatchObject([{ from: USDC, to: attacker, amount: 5 }]);
  });
});
