import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Transaction, TransactionType } from "../../src/domain/types.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { randomAddress } from "../helpers/chain.ts";
import { bearer, errorPaths, expectProblem, ingestTransactions, makeTransaction, trackWallet, type WalletBody } from "../helpers/seed.ts";

let t: TestApp;
let alice: string;
let ingestor: string;
let wallet: WalletBody;
/** The wallet's 60 transactions, newest first as the API must order them. */
let history: Transaction[];

const T0 = 1_710_000_000;
const TYPES: TransactionType[] = ["transfer", "swap", "stake", "nft", "other"];

beforeAll(async () => {
  t = await startTestApp("transactions");
  [alice, ingestor] = await Promise.all([t.token("alice"), t.token("ingestor", "ingest:write")]);
  wallet = await trackWallet(t, alice);
  const me = wallet.address;
  const txs: Transaction[] = [];
  for (let i = 0; i < 54; i++) {
    // Every third pair shares a blockTime (ordered by slot), out, in, alternating types.
    const outgoing = i % 2 === 0;
    txs.push(
      makeTransaction({
        type: TYPES[i % TYPES.length]!,
        from: outgoing ? me : randomAddress(),
        to: outgoing ? randomAddress() : me,
        blockTime: T0 + Math.floor(i / 2) * 10,
        slot: 1000 + i,
        amount: i,
      }),
    );
  }
  // Two with the same blockTime and slot: ordered by signature.
  txs.push(makeTransaction({ from: me, blockTime: T0 + 1000, slot: 5000, type: "transfer" }));
  txs.push(makeTransaction({ to: me, blockTime: T0 + 1000, slot: 5000, type: "transfer" }));
  // A self-transfer, listed and counted once.
  txs.push(makeTransaction({ from: me, to: me, blockTime: T0 + 2000, slot: 6000, type: "transfer" }));
  // Three more to reach 60.
  for (let i = 0; i < 3; i++) txs.push(makeTransaction({ to: me, blockTime: T0 - 100 - i, slot: 10 - i, type: "swap" }));
  // Not the wallet's.
  txs.push(makeTransaction({ blockTime: T0 + 500 }));
  await ingestTransactions(t, ingestor, txs);
  history = txs
    .filter((tx) => tx.from === me || tx.to === me)
    .sort((a, b) => b.blockTime - a.blockTime || b.slot - a.slot || (a.signature < b.signature ? -1 : 1));
});
afterAll(async () => {
  await t.close();
});

const get = (query: string, token = alice) => t.app.inject({ url: `/v1/transactions?${query}`, headers: bearer(token) });
const page = async (query: string) => {
  const res = await get(`walletId=${wallet.walletId}${query}`);
  expect(res.statusCode).toBe(200);
  return res.json() as { transactions: { signature: string; blockTime: number; type: string }[]; total: number; hasMore: boolean };
};
const signatures = (txs: { signature: string }[]) => txs.map((tx) => tx.signature);

describe("GET /v1/transactions", () => {
  it("returns exactly the interface's fields with JSON types, and mint (an extension)", async () => {
    const body = await page("&limit=60");
    expect(Object.keys(body).sort()).toEqual(["hasMore", "total", "transactions"]);
    const newest = history[0]!;
    expect(body.transactions[0]).toEqual({
      signature: newest.signature,
      type: newest.type,
      amount: newest.amount,
      token: newest.token,
      mint: newest.mint ?? null,
      from: newest.from,
      to: newest.to,
      blockTime: newest.blockTime,
      slot: newest.slot,
      fee: newest.fee,
      status: newest.status,
    });
  });

  it("shows each movement's mint, so a token that calls itself USDC is told apart from USDC", async () => {
    const desk = await trackWallet(t, alice);
    const USDC = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";
    const fake = randomAddress();
    await ingestTransactions(t, ingestor, [
      makeTransaction({ to: desk.address, token: "USDC", mint: USDC, blockTime: T0 + 10 }),
      makeTransaction({ to: desk.address, token: "USDC", mint: fake, blockTime: T0 + 20 }),
      makeTransaction({ to: desk.address, token: "SOL", mint: null, blockTime: T0 + 30 }),
    ]);
    const res = await get(`walletId=${desk.walletId}`);
    expect(res.statusCode, res.body).toBe(200);
    const shown = (res.json() as { transactions: { token: string; mint: string | null }[] }).transactions;
    expect(shown.map(({ token, mint }) => ({ token, mint }))).toEqual([
      { token: "SOL", mint: null },
      { token: "USDC", mint: fake },
      { token: "USDC", mint: USDC },
    ]);
  });

  it("lists 50 from offset 0 by default, newest first by blockTime, slot, then signature", async () => {
    expect(history).toHaveLength(60);
    const body = await page("");
    expect(body.total).toBe(60);
    expect(body.hasMore).toBe(true);
    expect(signatures(body.transactions)).toEqual(signatures(history.slice(0, 50)));
  });

  it("sets hasMore exactly at the boundary and answers past the end with an empty page", async () => {
    const last = await page("&limit=10&offset=50");
    expect(signatures(last.transactions)).toEqual(signatures(history.slice(50)));
    expect(last.hasMore).toBe(false);
    const beforeLast = await page("&limit=10&offset=49");
    expect(beforeLast.transactions).toHaveLength(10);
    expect(beforeLast.hasMore).toBe(true);
    expect(await page("&offset=60")).toEqual({ transactions: [], total: 60, hasMore: false });
    expect(await page("&offset=100000")).toEqual({ transactions: [], total: 60, hasMore: false });
  });

  it("pages without gaps or overlaps", async () => {
    const seen: string[] = [];
    for (let offset = 0; offset < 60; offset += 7) seen.push(...signatures((await page(`&limit=7&offset=${offset}`)).transactions));
    expect(seen).toEqual(signatures(history));
  });

  it.each(TYPES)("filters by type=%s, with its own total", async (type) => {
    const expected = history.filter((tx) => tx.type === type);
    const body = await page(`&type=${type}&limit=500`);
    expect(signatures(body.transactions)).toEqual(signatures(expected));
    expect(body.total).toBe(expected.length);
  });

  it("treats type=all as no filter", async () => {
    const body = await page("&type=all&limit=500");
    expect(signatures(body.transactions)).toEqual(signatures(history));
  });

  it("includes both time bounds", async () => {
    const start = T0 + 20;
    const end = T0 + 60;
    const expected = history.filter((tx) => tx.blockTime >= start && tx.blockTime <= end);
    expect(expected.map((tx) => tx.blockTime)).toContain(start);
    expect(expected.map((tx) => tx.blockTime)).toContain(end);
    const body = await page(`&startTime=${start}&endTime=${end}&limit=500`);
    expect(signatures(body.transactions)).toEqual(signatures(expected));
    expect(body.total).toBe(expected.length);
    const single = await page(`&startTime=${start}&endTime=${start}`);
    expect(single.transactions.every((tx) => tx.blockTime === start)).toBe(true);
    expect(single.total).toBe(2);
  });

  it("applies each time bound alone and together with a type", async () => {
    const since = await page(`&startTime=${T0 + 1000}`);
    expect(signatures(since.transactions)).toEqual(signatures(history.filter((tx) => tx.blockTime >= T0 + 1000)));
    const until = await page(`&endTime=${T0 - 1}&limit=500`);
    expect(signatures(until.transactions)).toEqual(signatures(history.filter((tx) => tx.blockTime <= T0 - 1)));
    const swapsUntil = await page(`&endTime=${T0 + 100}&type=swap&limit=500`);
    expect(signatures(swapsUntil.transactions)).toEqual(
      signatures(history.filter((tx) => tx.blockTime <= T0 + 100 && tx.type === "swap")),
    );
  });

  it("keeps the unfiltered total equal to the filtered count after a batch is ingested again", async () => {
    await ingestTransactions(t, ingestor, history.slice(0, 10));
    const unfiltered = await page("");
    const counted = await page(`&startTime=0&endTime=${T0 + 10_000}`);
    expect(unfiltered.total).toBe(60);
    expect(counted.total).toBe(60);
  });

  it("answers an empty page with total 0 for a wallet without transactions", async () => {
    const quiet = await trackWallet(t, alice);
    const res = await get(`walletId=${quiet.walletId}`);
    expect(res.json()).toEqual({ transactions: [], total: 0, hasMore: false });
  });

  it("answers 404 for an unknown wallet and for another caller's wallet", async () => {
    expectProblem(await get("walletId=wal_unknown"), 404, "not_found");
    expectProblem(await get(`walletId=${wallet.walletId}`, await t.token("bob")), 404, "not_found");
  });

  const badQueries: [string, string][] = [
    ["limit=abc", "query.limit"],
    ["limit=0", "query.limit"],
    ["limit=501", "query.limit"],
    ["offset=-1", "query.offset"],
    ["offset=100001", "query.offset"],
    ["offset=1.5", "query.offset"],
    ["type=transfers", "query.type"],
    ["startTime=yesterday", "query.startTime"],
    ["endTime=-5", "query.endTime"],
    ["startTime=1710000100&endTime=1710000000", "query.startTime"],
    ["colour=red", "query.colour"],
  ];
  it.each(badQueries)("refuses %s with 400 naming %s", async (query, path) => {
    const body = expectProblem(await get(`walletId=${wallet.walletId}&${query}`), 400, "validation_failed");
    expect(errorPaths(body)).toContain(path);
  });

  it("refuses a request without walletId with 400 naming query.walletId", async () => {
    expect(errorPaths(expectProblem(await get("limit=5"), 400, "validation_failed"))).toContain("query.walletId");
  });

  it("needs the transactions:read scope", async () => {
    expectProblem(await get(`walletId=${wallet.walletId}`, await t.token("alice", "wallets:read")), 403, "forbidden");
  });
});
