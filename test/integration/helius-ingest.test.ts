import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { randomSignature } from "../helpers/chain.ts";
import { bearer, trackWallet } from "../helpers/seed.ts";

const SECRET = "helius-test-auth-header-0123456789";
const FIXTURES = ["sol-transfer", "usdc-transfer", "swap", "nft-sale", "stake-sol", "failed-transfer", "unknown-type"];
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Item = Record<string, any>;
const fixture = (name: string): Item[] =>
  JSON.parse(readFileSync(new URL(`../fixtures/helius/${name}.json`, import.meta.url), "utf8"));
const delivery = (): Item[] => FIXTURES.flatMap(fixture);

const ALICE = "63icgRv21T39FpUXik9i1qiPayCutuDXyg5z7VFc6uDB";

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp("helius-ingest", { HELIUS_AUTH_HEADER: SECRET });
});
afterAll(async () => {
  await t.close();
});

const post = (payload: unknown, headers: Record<string, string> = { authorization: SECRET }) =>
  t.app.inject({ method: "POST", url: "/v1/ingest/helius", headers, payload: payload as object });

const storedCount = async () => Number((await t.deps.sql`select count(*)::int as n from transactions`)[0]!.n);

describe("POST /v1/ingest/helius", () => {
  it("stores a delivery of every fixture kind and answers 202 with the counts", async () => {
    const res = await post(delivery());
    expect(res.statusCode).toBe(202);
    expect(res.json()).toEqual({ accepted: 7, duplicates: 0, skipped: 0, rejected: [] });
    // One row per movement: the swap's two legs, the NFT sale's four (price, two fees, the NFT);
    // the USDC payment's one (the rent of the recipient's new token account is plumbing).
    const [batch] = await t.deps.sql`select transaction_count from ingest_batches`;
    expect(batch).toEqual({ transaction_count: 11 });
  });

  it("stores the mapping: principal transfer as leg 0, types, units and failure", async () => {
    const rows = await t.deps.sql`
      select signature, type, amount::text, token, mint, from_address, to_address, block_time::int, slot::int, fee::text, status
      from transactions where leg = 0 order by slot`;
    const bySignature = new Map(delivery().map((item) => [item.signature as string, item]));
    const summary = rows.map((row) => [bySignature.get(row.signature)?.type, row.type, row.amount, row.token, row.status]);
    expect(summary).toEqual([
      ["TRANSFER", "transfer", "12.5", "SOL", "success"],
      ["TRANSFER", "transfer", "2500.75", "USDC", "success"],
      ["SWAP", "swap", "3", "SOL", "success"],
      ["NFT_SALE", "nft", "23.275", "SOL", "success"],
      ["STAKE_SOL", "stake", "150.00228288", "SOL", "success"],
      ["TRANSFER", "transfer", "0", "SOL", "failed"],
      ["UNKNOWN", "other", "0.05", "SOL", "success"],
    ]);
    const usdc = rows[1]!;
    expect(usdc).toMatchObject({
      mint: "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v",
      from_address: "GFwhaRvWtgiyCT1TuDCHp278dATAUNwuj1i3oXh3GesM",
      to_address: "DHvTBxtmNA1iP3AWQgdB2TDYLV8h6bYVSU8uMz8qUmRK",
      block_time: 1718035206,
      slot: 270118355,
      fee: "0.000015",
    });
    const failed = rows[5]!;
    expect(failed.from_address).toBe(failed.to_address);
    const nft = await t.deps.sql`
      select leg, amount::text, token, from_address, to_address from transactions where signature = ${fixture("nft-sale")[0]!.signature} order by leg`;
    expect(nft.map((row) => [row.leg, row.amount, row.token])).toEqual([
      [0, "23.275", "SOL"],
      [1, "0.98", "SOL"],
      [2, "0.245", "SOL"],
      [3, "1", "BF2eY47GGXj8kJP8fQcaj2HWzcETYoSAY9XPG6mBLpM6"],
    ]);
  });

  it("shows the wallet's movements to a caller tracking it through GET /v1/transactions, both legs of its swap", async () => {
    const token = await t.token("helius-reader");
    const wallet = await trackWallet(t, token, { address: ALICE });
    const res = await t.app.inject({ url: `/v1/transactions?walletId=${wallet.walletId}`, headers: bearer(token) });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      transactions: [
        {
          signature: fixture("swap")[0]!.signature,
          type: "swap",
          amount: 3,
          token: "SOL",
          mint: "So11111111111111111111111111111111111111112",
          from: ALICE,
          to: "CqxpscBsd28Zdz5UwVPdzG8x2Nap5G8hyLWWfoM38BBz",
          blockTime: 1718035213,
          slot: 270118371,
          fee: 0.000085,
          status: "success",
        },
        {
          signature: fixture("swap")[0]!.signature,
          type: "swap",
          amount: 452.318912,
          token: "USDC",
          mint: "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v",
          from: "CqxpscBsd28Zdz5UwVPdzG8x2Nap5G8hyLWWfoM38BBz",
          to: ALICE,
          blockTime: 1718035213,
          slot: 270118371,
          fee: 0.000085,
          status: "success",
        },
        {
          signature: fixture("sol-transfer")[0]!.signature,
          type: "transfer",
          amount: 12.5,
          token: "SOL",
          mint: null,
          from: ALICE,
          to: "7ty9YmokjEWGXufay9eMYmbWhFW5FnnGva1C2SEHZfvh",
          blockTime: 1718035201,
          slot: 270118342,
          fee: 0.000005,
          status: "success",
        },
      ],
      total: 3,
      hasMore: false,
    });
  });

  it("stores nothing new when Helius replays a delivery, and counts repeats inside one delivery as skipped", async () => {
    const before = await storedCount();
    expect((await post(delivery())).json()).toEqual({ accepted: 0, duplicates: 7, skipped: 0, rejected: [] });
    const sol = fixture("sol-transfer")[0]!;
    expect((await post([sol, sol])).json()).toEqual({ accepted: 0, duplicates: 1, skipped: 1, rejected: [] });
    expect(await storedCount()).toBe(before);
  });

  it("stores a native transfer of more lamports than 2^53 (about 9,007,199 SOL) instead of refusing the delivery", async () => {
    // Lamports are a u64 on chain; whales and stake pools move tens of millions of SOL at once.
    const whale = fixture("sol-transfer")[0]!;
    whale.signature = randomSignature();
    whale.nativeTransfers[0].amount = 25_000_000 * 1_000_000_000;
    const small = fixture("sol-transfer")[0]!;
    small.signature = randomSignature();
    const res = await post([whale, small]);
    expect(res.statusCode).toBe(202);
    expect(res.json()).toEqual({ accepted: 2, duplicates: 0, skipped: 0, rejected: [] });
    const [row] = await t.deps.sql`select amount::text from transactions where signature = ${whale.signature}`;
    expect(row).toEqual({ amount: "25000000" });
  });

  it.each([
    ["a wrong secret", { authorization: "not-the-helius-auth-header" }],
    ["no Authorization header", {}],
    ["a valid JWT instead of the shared secret", "jwt"],
  ])("answers 401 problem+json to %s, before looking at the body", async (_label, headers) => {
    const sent = headers === "jwt" ? bearer(await t.token("helius-intruder", "ingest:write admin")) : headers;
    const res = await post([{ not: "a helius item" }], sent as Record<string, string>);
    expect(res.statusCode).toBe(401);
    expect(res.headers["content-type"]).toContain("application/problem+json");
    expect(res.json()).toMatchObject({ status: 401, code: "unauthorized" });
  });

  it("refuses an item with a missing field, a mistyped field or a bad address on its own, naming the path, and stores the rest", async () => {
    const items = delivery().slice(0, 4);
    delete items[0]!.feePayer;
    items[1]!.slot = "270118355";
    items[2]!.tokenTransfers[1].toUserAccount = "z".repeat(44);
    items[3]!.signature = randomSignature();
    const res = await post(items);
    expect(res.statusCode).toBe(202);
    expect(res.json()).toEqual({
      accepted: 1,
      duplicates: 0,
      skipped: 0,
      rejected: [
        { index: 0, signature: items[0]!.signature, errors: [{ path: "body.0.feePayer", message: "is required" }] },
        { index: 1, signature: items[1]!.signature, errors: [{ path: "body.1.slot", message: "must be a whole number" }] },
        {
          index: 2,
          signature: items[2]!.signature,
          errors: [{ path: "body.2.tokenTransfers.1.toUserAccount", message: "must be a Solana address (base58 of 32 bytes)" }],
        },
      ],
    });
    const [stored] = await t.deps.sql`select count(*)::int as n from transactions where signature = ${items[3]!.signature} and leg = 0`;
    expect(stored).toEqual({ n: 1 });
  });

  it("refuses an item dated before Solana's first block or more than 10 minutes ahead of the clock on its own, and stores the rest", async () => {
    const items = delivery().slice(0, 3);
    items[0]!.timestamp = 0;
    // Half an hour over 3 hours: the server reads its clock a moment later, and exactly 3 hours
    // read "2 hours ahead" whenever a second turned in between.
    items[1]!.timestamp = Math.floor(Date.now() / 1000) + 3 * 3600 + 1800;
    items[2]!.signature = randomSignature();
    const res = await post(items);
    expect(res.statusCode).toBe(202);
    expect(res.json()).toMatchObject({
      accepted: 1,
      rejected: [
        { index: 0, errors: [{ path: "body.0.timestamp", message: "must be >= 1584316800" }] },
        { index: 1, errors: [{ path: "body.1.timestamp", message: expect.stringMatching(/^is 3 hours ahead of this server's clock/) }] },
      ],
    });
  });

  it("stores a token transfer whose tokenAmount Helius sent as a decimal string, and refuses any other string", async () => {
    const asString = fixture("usdc-transfer")[0]!;
    asString.signature = randomSignature();
    asString.tokenTransfers[0].tokenAmount = "2500.75";
    const notDecimal = fixture("usdc-transfer")[0]!;
    notDecimal.signature = randomSignature();
    notDecimal.tokenTransfers[0].tokenAmount = "2.5e3";
    const negative = fixture("usdc-transfer")[0]!;
    negative.signature = randomSignature();
    negative.tokenTransfers[0].tokenAmount = -1;
    const res = await post([asString, notDecimal, negative]);
    expect(res.statusCode).toBe(202);
    expect(res.json()).toMatchObject({ accepted: 1, duplicates: 0 });
    expect(res.json().rejected).toEqual([
      {
        index: 1,
        signature: notDecimal.signature,
        errors: [{ path: "body.1.tokenTransfers.0.tokenAmount", message: "must be a decimal number written as a string (digits, an optional fraction)" }],
      },
      { index: 2, signature: negative.signature, errors: [{ path: "body.2.tokenTransfers.0.tokenAmount", message: "must be >= 0" }] },
    ]);
    const [row] = await t.deps.sql`select amount::text, token from transactions where signature = ${asString.signature} and leg = 0`;
    expect(row).toEqual({ amount: "2500.75", token: "USDC" });
  });

  it("refuses a tokenAmount string with more digits than it keeps exactly, rather than judge a rounded amount", async () => {
    // As a double, "9.99999999999999999" is 10: it would reach a large_transfer threshold of 10.
    const tooPrecise = fixture("usdc-transfer")[0]!;
    tooPrecise.signature = randomSignature();
    tooPrecise.tokenTransfers[0].tokenAmount = "9.99999999999999999";
    const nineDecimals = fixture("usdc-transfer")[0]!;
    nineDecimals.signature = randomSignature();
    nineDecimals.tokenTransfers[0].tokenAmount = "12345.123456789";
    const res = await post([tooPrecise, nineDecimals]);
    expect(res.statusCode).toBe(202);
    expect(res.json()).toMatchObject({ accepted: 1 });
    expect(res.json().rejected).toEqual([
      {
        index: 0,
        signature: tooPrecise.signature,
        errors: [{ path: "body.0.tokenTransfers.0.tokenAmount", message: expect.stringMatching(/^has more significant digits than the service keeps exactly/) }],
      },
    ]);
    const rows = await t.deps.sql`select signature, amount::text from transactions where signature in ${t.deps.sql([tooPrecise.signature, nineDecimals.signature])} and leg = 0`;
    expect(rows).toEqual([{ signature: nineDecimals.signature, amount: "12345.123456789" }]);
  });

  it("rejects an empty delivery, a non-array body, items that are not objects and more than 1000 items with 400", async () => {
    expect((await post([])).statusCode).toBe(400);
    expect((await post({ transactions: delivery() })).statusCode).toBe(400);
    // Not a delivery at all: items that are not even objects.
    const notObjects = await post([fixture("sol-transfer")[0]!, 42]);
    expect(notObjects.statusCode).toBe(400);
    expect(notObjects.json().errors).toEqual([{ path: "body.1", message: "must be an object" }]);
    const tooMany = Array.from({ length: 1001 }, () => fixture("failed-transfer")[0]!);
    const res = await post(tooMany);
    expect(res.statusCode).toBe(400);
    expect(res.json().errors[0].path).toBe("body");
  });
});

describe("POST /v1/ingest/helius without HELIUS_AUTH_HEADER", () => {
  it("answers 404 problem+json: the webhook is not enabled", async () => {
    const off = await startTestApp("helius-ingest-off");
    try {
      const res = await off.app.inject({
        method: "POST",
        url: "/v1/ingest/helius",
        headers: { authorization: SECRET },
        payload: delivery(),
      });
      expect(res.statusCode).toBe(404);
      expect(res.json()).toMatchObject({ code: "not_found", detail: expect.stringContaining("HELIUS_AUTH_HEADER") });
    } finally {
      await off.close();
    }
  });
});
