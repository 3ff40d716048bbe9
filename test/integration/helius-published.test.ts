// Helius enhanced transactions as Helius itself published them (test/fixtures/helius/published,
// its README names each source), posted through POST /v1/ingest/helius, and what is stored
// checked against what each payload means: the rows, their sides, amounts and status.
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { randomSignature } from "../helpers/chain.ts";

const SECRET = "helius-published-auth-header-0123";

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Item = Record<string, any>;

/** A published example as a delivery: a file holding one item (as the Rust SDK's do) is sent alone. */
function delivery(name: string): Item[] {
  const value = JSON.parse(readFileSync(new URL(`../fixtures/helius/published/${name}.json`, import.meta.url), "utf8")) as Item | Item[];
  return Array.isArray(value) ? value : [value];
}

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp("helius-published", { HELIUS_AUTH_HEADER: SECRET });
});
afterAll(async () => {
  await t.close();
});

const post = (items: unknown[]) => t.app.inject({ method: "POST", url: "/v1/ingest/helius", headers: { authorization: SECRET }, payload: items });

/** The rows of a signature in leg order, as [leg, type, amount, token, mint, from, to, status]. */
const rowsOf = async (signature: string) =>
  (
    await t.deps.sql`
      select leg, type, amount::text, token, mint, from_address, to_address, status
      from transactions where signature = ${signature} order by leg`
  ).map((r) => [r.leg, r.type, r.amount, r.token, r.mint, r.from_address, r.to_address, r.status]);

describe("a wrapped-SOL buy and sell as a Helius webhook delivered them (`events: []`)", () => {
  const [buy, sell] = delivery("launchpad-wsol-buy-sell") as [Item, Item];
  const WALLET = "5awoNsCULYySQaxHsGYxd9Xm7cr3GjyTZj8FmU4zsVEf";
  const POOL = "FhVo3mqL8PW5pH5U2CN4XE33DokiyZnUwuGpH2hmHLuM";
  const WSOL = "So11111111111111111111111111111111111111112";
  const TOKEN = "GLZPY8BKvz4SskptWRpNZ29UJPmS9BYx1enRHUa9oSDx";

  it("stores both items: Helius sends `events` as an empty list for an item with none", async () => {
    expect(buy.events).toEqual([]);
    const res = await post([buy, sell]);
    expect(res.statusCode).toBe(202);
    expect(res.json()).toEqual({ accepted: 2, duplicates: 0, skipped: 0, rejected: [] });
  });

  it("stores the wrap as the wrapped-SOL transfer alone: the SOL wrapped into, and the rent of, the temporary token account are not legs", async () => {
    // Native transfers: 0.2 SOL and 0.00203928 rent into 7WmE… (the wallet's temporary wSOL
    // account, the token transfer's source), rent into FPmr… (its new token account), the rent
    // back when 7WmE… is closed. The 0.2 SOL moved once: as the 0.2 wSOL paid to the pool.
    expect(await rowsOf(buy.signature)).toEqual([
      [0, "transfer", "0.2", "SOL", WSOL, WALLET, POOL, "success"],
      [1, "transfer", "322281812.767019", TOKEN, TOKEN, POOL, WALLET, "success"],
    ]);
  });

  it("stores the unwrap as the wrapped SOL received: the closed account's SOL coming back is not a second leg", async () => {
    // 0.193335294 SOL leaves 7WmE… for the wallet when it is closed: the 0.191296014 wSOL the
    // pool paid into it plus its own rent.
    expect(await rowsOf(sell.signature)).toEqual([
      [0, "other", "322281812", TOKEN, TOKEN, WALLET, POOL, "success"],
      [1, "other", "0.191296014", "SOL", WSOL, POOL, WALLET, "success"],
    ]);
  });

  it("refuses an `events` list that is not empty, keeping the item for an operator: no published delivery shows what it would hold", async () => {
    const item = { ...buy, signature: randomSignature(), events: [{ compressed: [] }] };
    const res = await post([item]);
    expect(res.json()).toEqual({
      accepted: 0,
      duplicates: 0,
      skipped: 0,
      rejected: [{ index: 0, signature: item.signature, errors: [{ path: "body.0.events", message: "must list at most 0 items" }] }],
    });
  });
});

describe("Helius's documented NFT sale (docs: webhooks, enhanced payload)", () => {
  const [sale] = delivery("docs-webhook-nft-sale") as [Item];
  const BUYER = "CKs1E69a2e9TmH4mKKLrXFF8kD3ZnwKjoEuXa6sz9WqX";
  const ESCROW = "AAaTGaA3uVqikfVEwoSG7EwkCb4bBDsMEyueiVUS5CaU";
  const SELLER = "5DxD5ViWjvRZEkxQEaJHZw2sBsso6xoXx3wGFNKgXUzE";
  const NFT = "FdsNQE5EeCe57tbEYCRV1JwW5dzNCof7MUTaGWhmzYqu";

  it("stores every payment with its real sides, the NFT to the buyer, and not the rent of the buyer's new token account", async () => {
    expect((await post([sale])).json()).toEqual({ accepted: 1, duplicates: 0, skipped: 0, rejected: [] });
    // The buyer pays 72.936 SOL into Magic Eden's escrow, which pays the seller 71.856 and
    // 1.08 to rFqF…; leg 0 is the largest: the buyer's payment, not the seller's proceeds.
    expect(await rowsOf(sale.signature)).toEqual([
      [0, "nft", "72.936", "SOL", null, BUYER, ESCROW, "success"],
      [1, "nft", "0.00201144", "SOL", null, BUYER, "D8TxfGwdu9MiNMoJmUoC9wQfNfNT7Lnm6DzifQHRTy6B", "success"],
      [2, "nft", "71.856", "SOL", null, ESCROW, SELLER, "success"],
      [3, "nft", "1.08", "SOL", null, ESCROW, "rFqFJ9g7TGBD8Ed7TPDnvGKZ5pWLPDyxLcvcH2eRCtt", "success"],
      [4, "nft", "1", NFT, NFT, "1BWutmTvYPwDtmw9abTkS4Ssr8no61spGAvW1X6NDix", BUYER, "success"],
    ]);
  });
});

describe("failed transactions as the Helius Rust SDK's tests hold them", () => {
  it("stores a failed swap that names no transfer as 0 SOL from its fee payer to itself, failed, with the fee it paid", async () => {
    const [swap] = delivery("rust-sdk-failed-swap") as [Item];
    expect(swap.nativeTransfers).toEqual([]);
    expect(swap.tokenTransfers).toEqual([]);
    expect((await post([swap])).json()).toEqual({ accepted: 1, duplicates: 0, skipped: 0, rejected: [] });
    const payer = "22WLnDCeMvcoboRgVt8a4ztkd4yA1ptSv9JpnE2gx95R";
    expect(await rowsOf(swap.signature)).toEqual([[0, "swap", "0", "SOL", null, payer, payer, "failed"]]);
    const [row] = await t.deps.sql`select fee::text from transactions where signature = ${swap.signature}`;
    expect(row).toEqual({ fee: "0.000031563" });
  });

  it("stores a failed transfer with the amount Helius names although nothing moved, as failed: the attempt, not a movement", async () => {
    const [transfer] = delivery("rust-sdk-failed-transfer") as [Item];
    // Only the fee left the payer (accountData): Helius lists the transfer the transaction tried.
    expect(transfer.accountData.map((a: Item) => a.nativeBalanceChange)).toEqual([-5000, 0, 0]);
    expect((await post([transfer])).json()).toEqual({ accepted: 1, duplicates: 0, skipped: 0, rejected: [] });
    expect(await rowsOf(transfer.signature)).toEqual([
      [0, "transfer", "0.05008025", "SOL", null, transfer.feePayer, "BZkAJnd9QaNWgAXkTjNmKvYiAGXVAzhWZHJpJgo6RsAt", "failed"],
    ]);
  });
});
