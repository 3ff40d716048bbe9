// Native (SOL) transfers into or out of a token account (src/ingest/helius-plumbing.ts): left
// out only as a token account's rent (up to 0.01 SOL, whoever's account it is), a wrap into
// one's own account that a wrapped-SOL transfer shows leaving, or one's own account closed back
// to oneself; stored otherwise, to or from the account's user or the account itself. And a
// native transfer's empty side refused rather than guessed. The attack shapes are the security
// reviews' of 2026-11-28.
import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { EMPTY_NATIVE_SIDE_MESSAGE } from "../../src/ingest/helius-issues.ts";
import { LAMPORTS_PER_SOL, mapHeliusTransaction, type HeliusTokenTransfer, type HeliusTransaction } from "../../src/ingest/helius.ts";
import { wrappedSolLamports } from "../../src/ingest/helius-plumbing.ts";
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
const token = (fromUser: string, fromAccount: string, toUser: string, toAccount: string, amount: number | string = 0.000000001, mint = WSOL): HeliusTokenTransfer => ({
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

const ALLOWANCE = 10_000_000; // lamports: 0.01 SOL
const RENT = 2_039_280; // an SPL token account's rent-exempt minimum

/** A native transfer of `lamports`. */
const lamports = (from: string, to: string, amount: number) => ({ fromUserAccount: from, toUserAccount: to, amount });

describe("a token account's rent, whoever's account it is", () => {
  it("leaves out up to 0.01 SOL into someone else's new token account, and stores one lamport more as sent to its owner", () => {
    const paying = (rent: number) =>
      item({ nativeTransfers: [lamports(hot, attackerAccount, rent)], tokenTransfers: [token(hot, hotAccount, attacker, attackerAccount, 2500.75, USDC)] });
    expect(solLegs(paying(RENT))).toEqual([]);
    expect(solLegs(paying(ALLOWANCE))).toEqual([]);
    expect(solLegs(paying(ALLOWANCE + 1))).toEqual([[hot, attacker, 0.010000001]]);
  });

  it("keeps the USDC payment alone as the recipient-rent item's movement, as before 2026-11-28", () => {
    const payment = item({ nativeTransfers: [lamports(hot, attackerAccount, RENT)], tokenTransfers: [token(hot, hotAccount, attacker, attackerAccount, 2500.75, USDC)] });
    expect(mapHeliusTransaction(payment).map(({ leg, from, to, amount, token }) => [leg, from, to, amount, token])).toEqual([[0, hot, attacker, 2500.75, "USDC"]]);
  });

  it("makes a TOKEN_MINT airdrop's minted tokens its principal again, not the rent of the recipient's new account", () => {
    const airdrop = item({
      type: "TOKEN_MINT",
      nativeTransfers: [lamports(hot, attackerAccount, RENT)],
      tokenTransfers: [{ fromUserAccount: "", toUserAccount: attacker, fromTokenAccount: "", toTokenAccount: attackerAccount, mint: USDC, tokenAmount: 1_000_000 }],
    });
    expect(mapHeliusTransaction(airdrop).map(({ leg, from, to, amount, token }) => [leg, from, to, amount, token])).toEqual([[0, USDC, attacker, 1_000_000, "USDC"]]);
  });

  it("leaves out up to 0.01 SOL into one's own token account with no wrap, and stores one lamport more as sent to the account", () => {
    const own = (rent: number) => item({ nativeTransfers: [lamports(hot, hotAccount, rent)], tokenTransfers: [token(attacker, attackerAccount, hot, hotAccount, 5, USDC)] });
    expect(solLegs(own(ALLOWANCE))).toEqual([]);
    expect(solLegs(own(ALLOWANCE + 1))).toEqual([[hot, hotAccount, 0.010000001]]);
  });

  it("counts the allowance per account, not per native transfer: split in parts, the SOL past it is stored", () => {
    // 0.006 + 0.004 SOL reach the attacker account's allowance, and one lamport more is past it; `elsewhere`'s lamport is within its own.
    const split = item({
      nativeTransfers: [lamports(hot, attackerAccount, 6_000_000), lamports(hot, attackerAccount, 4_000_000), lamports(hot, attackerAccount, 1), lamports(hot, elsewhere, 1)],
      tokenTransfers: [token(attacker, attackerAccount, attacker, elsewhere, 0.000001, USDC)],
    });
    expect(solLegs(split)).toEqual([[hot, attacker, 0.000000001]]);
  });
});

describe("SOL wrapped into one's own token account", () => {
  /** hot wraps `wrap` lamports into its own account, which sends `wsol` wrapped SOL to the attacker's. */
  const wrapping = (wrap: number, wsol: number | string) =>
    item({ nativeTransfers: [lamports(hot, hotAccount, wrap)], tokenTransfers: [token(hot, hotAccount, attacker, attackerAccount, wsol)] });

  it("leaves out a wrap up to the wrapped SOL sent on plus 0.01 SOL, and stores one lamport more as sent to the account, whole", () => {
    expect(solLegs(wrapping(200_000_000 + ALLOWANCE, 0.2))).toEqual([]);
    expect(solLegs(wrapping(200_000_000 + ALLOWANCE + 1, 0.2))).toEqual([[hot, hotAccount, 0.210000001]]);
    expect(mapHeliusTransaction(wrapping(200_000_000 + ALLOWANCE, 0.2))).toMatchObject([{ leg: 0, from: hot, to: attacker, amount: 0.2, token: "SOL", mint: WSOL }]);
  });

  it("reads the wrapped SOL sent on to the lamport, exactly: 8.2 is 8,200,000,000 lamports (a double times 10^9 gives 8,199,999,999.999999)", () => {
    expect(wrappedSolLamports(8.2)).toBe(8_200_000_000n);
    expect(wrappedSolLamports("8.2")).toBe(8_200_000_000n);
    expect(wrappedSolLamports(0.191296014)).toBe(191_296_014n);
    expect(wrappedSolLamports(1e-9)).toBe(1n);
    expect(wrappedSolLamports("0.0000000019")).toBe(1n);
    expect(solLegs(wrapping(8_200_000_000 + ALLOWANCE, 8.2))).toEqual([]);
    expect(solLegs(wrapping(8_200_000_000 + ALLOWANCE + 1, "8.2"))).toEqual([[hot, hotAccount, 8.210000001]]);
  });

  it("counts only wrapped SOL that leaves its owner: sent on to another account of the same owner, the wrap is stored", () => {
    // The second account's close authority may be the attacker's: the wSOL moving there looks like a self-transfer, which fires nothing.
    const toOwnAccount = item({ nativeTransfers: [lamports(hot, hotAccount, 40_000 * LAMPORTS_PER_SOL)], tokenTransfers: [token(hot, hotAccount, hot, elsewhere, 40_000)] });
    expect(solLegs(toOwnAccount)).toEqual([[hot, hotAccount, 40_000]]);
  });

  it("never counts the wrapped SOL of someone else's account: a transfer into it past 0.01 SOL is its owner's", () => {
    const theirs = item({ nativeTransfers: [lamports(hot, attackerAccount, 40_000 * LAMPORTS_PER_SOL)], tokenTransfers: [token(attacker, attackerAccount, hot, hotAccount, 40_000)] });
    expect(solLegs(theirs)).toEqual([[hot, attacker, 40_000]]);
  });
});

describe("the security reviews' drains", () => {
  it("stores 40,000 SOL into an account the hot wallet nominally owns, beside dust naming it, as sent to that account", () => {
    // Created owned by the hot wallet, its close authority the attacker's, who closes it later in a transaction without the hot wallet.
    const drain = item({
      nativeTransfers: [lamports(hot, hotAccount, 40_000 * LAMPORTS_PER_SOL + RENT)],
      tokenTransfers: [token(attacker, attackerAccount, hot, hotAccount, 0.000001, USDC)],
    });
    expect(solLegs(drain)).toEqual([[hot, hotAccount, 40_000.00203928]]);
  });

  it("stores 40,000 SOL into an attacker's token account beside the attacker's own dust as sent to the attacker", () => {
    const drain = item({ nativeTransfers: [lamports(hot, attackerAccount, 40_000 * LAMPORTS_PER_SOL)], tokenTransfers: [token(attacker, elsewhere, attacker, attackerAccount)] });
    expect(solLegs(drain)).toEqual([[hot, attacker, 40_000]]);
  });

  it("counts SOL through an account given two users once: into the account from the hot wallet, then out of the account to the attacker", () => {
    // Wrapped into the hot wallet's own account, whose owner is then changed to the attacker, who closes it.
    const handedOver = item({
      nativeTransfers: [lamports(hot, hotAccount, 40_000 * LAMPORTS_PER_SOL), lamports(hotAccount, attacker, 40_000 * LAMPORTS_PER_SOL)],
      tokenTransfers: [token(hot, hotAccount, hot, elsewhere), token(attacker, hotAccount, attacker, elsewhere)],
    });
    expect(solLegs(handedOver)).toEqual([
      [hot, hotAccount, 40_000],
      [hotAccount, attacker, 40_000],
    ]);
    expect(solLegs(handedOver).filter(([from]) => from === hot)).toHaveLength(1);
  });

  it("stores SOL into a token account no token transfer gives a user as sent to the account", () => {
    const unowned = item({
      nativeTransfers: [lamports(hot, attackerAccount, 40_000 * LAMPORTS_PER_SOL)],
      tokenTransfers: [{ fromUserAccount: "", toUserAccount: null, fromTokenAccount: "", toTokenAccount: attackerAccount, mint: USDC, tokenAmount: 1 }],
    });
    expect(solLegs(unowned)).toEqual([[hot, attackerAccount, 40_000]]);
  });
});

describe("SOL out of a token account", () => {
  it("leaves out one's own account closed back to oneself, whatever its amount", () => {
    const closed = item({ nativeTransfers: [lamports(hotAccount, hot, 40_000 * LAMPORTS_PER_SOL)], tokenTransfers: [token(attacker, attackerAccount, hot, hotAccount, 40_000)] });
    expect(solLegs(closed)).toEqual([]);
  });

  it("stores a close to someone else as sent by the account's owner", () => {
    const closedAway = item({ nativeTransfers: [lamports(hotAccount, attacker, 5_000 * LAMPORTS_PER_SOL)], tokenTransfers: [token(hot, hotAccount, attacker, attackerAccount)] });
    expect(solLegs(closedAway)).toEqual([[hot, attacker, 5_000]]);
  });

  it("stores a close of an account with no user as sent by the account itself", () => {
    const unowned = item({
      nativeTransfers: [lamports(attackerAccount, hot, RENT)],
      tokenTransfers: [{ fromUserAccount: null, toUserAccount: "", fromTokenAccount: attackerAccount, toTokenAccount: "", mint: USDC, tokenAmount: 1 }],
    });
    expect(solLegs(unowned)).toEqual([[attackerAccount, hot, 0.00203928]]);
  });

  it("judges SOL from one token account into another as going into the second, from the first's owner", () => {
    const between = (amount: number) =>
      item({ nativeTransfers: [lamports(hotAccount, attackerAccount, amount)], tokenTransfers: [token(hot, hotAccount, attacker, attackerAccount, 1, USDC)] });
    expect(solLegs(between(ALLOWANCE))).toEqual([]);
    expect(solLegs(between(ALLOWANCE + 1))).toEqual([[hot, attacker, 0.010000001]]);
  });
});

describe("Helius's published examples and the repository's fixtures (test/fixtures/helius)", () => {
  const load = (path: string): HeliusTransaction[] => {
    const value = JSON.parse(readFileSync(new URL(`../fixtures/helius/${path}`, import.meta.url), "utf8")) as HeliusTransaction | HeliusTransaction[];
    return Array.isArray(value) ? value : [value];
  };
  const directory = new URL("../fixtures/helius/", import.meta.url);
  const files = [
    ...readdirSync(directory).filter((name) => name.endsWith(".json")),
    ...readdirSync(new URL("published/", directory))
      .filter((name) => name.endsWith(".json"))
      .map((name) => `published/${name}`),
  ];
  const tokenAccountsOf = (tx: HeliusTransaction) => new Set((tx.tokenTransfers ?? []).flatMap((t) => [t.fromTokenAccount, t.toTokenAccount]));
  const touchesTokenAccount = (tx: HeliusTransaction) => (n: { fromUserAccount: string | null; toUserAccount: string | null }) =>
    tokenAccountsOf(tx).has(n.fromUserAccount) || tokenAccountsOf(tx).has(n.toUserAccount);

  it("maps every item exactly as before 2026-11-28: each native transfer into or out of a token account the item names is plumbing", () => {
    const items = files.flatMap(load);
    expect(items.length).toBeGreaterThanOrEqual(12);
    // Not vacuous: the wSOL buy and sell, the USDC payment, the swap and the NFT sale have nine such transfers.
    expect(items.flatMap((tx) => (tx.nativeTransfers ?? []).filter(touchesTokenAccount(tx)))).toHaveLength(9);
    for (const tx of items) {
      const withoutThem = { ...tx, nativeTransfers: (tx.nativeTransfers ?? []).filter((n) => !touchesTokenAccount(tx)(n)) };
      expect(mapHeliusTransaction(tx), tx.signature).toEqual(mapHeliusTransaction(withoutThem));
    }
  });

  it("leaves out every wrap, rent and close of the published wrapped-SOL buy and sell", () => {
    const [buy, sell] = load("published/launchpad-wsol-buy-sell.json") as [HeliusTransaction, HeliusTransaction];
    expect(buy.nativeTransfers).toHaveLength(4);
    expect(sell.nativeTransfers).toHaveLength(2);
    expect(solLegs(buy)).toEqual([]);
    expect(solLegs(sell)).toEqual([]);
  });

  it("leaves out the rent of the buyer's new token account in Helius's documented NFT sale, and keeps its four payments", () => {
    const [sale] = load("published/docs-webhook-nft-sale.json") as [HeliusTransaction];
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
