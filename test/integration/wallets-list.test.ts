import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { MINTS, randomAddress } from "../helpers/chain.ts";
import { bearer, errorPaths, expectProblem, ingestAccounts, ingestTransactions, makeTransaction, trackWallet, type WalletBody } from "../helpers/seed.ts";

let t: TestApp;
let sorter: string;
let pager: string;
let ingestor: string;
/** Five wallets of `sorter`, tracked in this order, with the values below. */
let w: WalletBody[];
let pages: WalletBody[];

const FACTS = [
  { balance: 10, riskScore: 50, lastActivity: 1_700_001_000 },
  { balance: 30, riskScore: 10, lastActivity: null },
  { balance: 20, riskScore: 50, lastActivity: 1_700_003_000 },
  { balance: 10, riskScore: 90, lastActivity: 1_700_002_000 },
  { balance: 0, riskScore: 0, lastActivity: null },
];

beforeAll(async () => {
  t = await startTestApp("wallets-list");
  [sorter, pager, ingestor] = await Promise.all([t.token("sorter"), t.token("pager"), t.token("ingestor", "ingest:write")]);
  w = [];
  for (const _fact of FACTS) w.push(await trackWallet(t, sorter));
  // Ids sort by creation time; give the last two the smallest ids so that a tie broken by
  // walletId differs from one broken by creation or storage order.
  for (const [i, id] of [[3, "wal_00000000000000000000000000"], [4, "wal_00000000000000000000000001"]] as const) {
    await t.deps.sql`update tracked_wallets set id = ${id} where id = ${w[i]!.walletId}`;
    w[i] = { ...w[i]!, walletId: id };
  }
  await ingestAccounts(
    t,
    ingestor,
    w.map((wallet, i) => ({ address: wallet.address, balance: FACTS[i]!.balance, tokenAccounts: [], nfts: [] })),
  );
  await ingestTransactions(
    t,
    ingestor,
    w.flatMap((wallet, i) => {
      const blockTime = FACTS[i]!.lastActivity;
      return blockTime === null ? [] : [makeTransaction({ from: wallet.address, blockTime })];
    }),
  );
  for (const [i, wallet] of w.entries()) {
    await t.deps.sql`update address_state set risk_score = ${FACTS[i]!.riskScore} where address = ${wallet.address}`;
  }
  pages = [];
  for (let i = 0; i < 27; i++) pages.push(await trackWallet(t, pager));
});
afterAll(async () => {
  await t.close();
});

const list = (query: string, token = sorter) => t.app.inject({ url: `/v1/wallets${query}`, headers: bearer(token) });

async function order(query: string): Promise<number[]> {
  const res = await list(query);
  expect(res.statusCode).toBe(200);
  return res.json().wallets.map((summary: { walletId: string }) => w.findIndex((x) => x.walletId === summary.walletId));
}

/** Indexes of wallets that tie, in walletId order (the tie-break). */
const byId = (...indexes: number[]) => [...indexes].sort((a, b) => (w[a]!.walletId < w[b]!.walletId ? -1 : 1));

describe("GET /v1/wallets", () => {
  it("returns summaries with exactly the interface's fields and their types", async () => {
    const res = await list("?sortBy=trackedAt&order=asc");
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual(["limit", "page", "total", "wallets"]);
    const [first, second] = body.wallets;
    expect(Object.keys(first).sort()).toEqual(
      ["walletId", "address", "alias", "balance", "tokenAccounts", "nftCount", "riskScore", "lastActivity", "balanceAsOf"].sort(),
    );
    expect(first).toEqual({
      walletId: w[0]!.walletId,
      address: w[0]!.address,
      alias: null,
      balance: 10,
      tokenAccounts: 0,
      nftCount: 0,
      riskScore: 50,
      lastActivity: new Date(1_700_001_000_000).toISOString(),
      balanceAsOf: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
    expect(second.lastActivity).toBeNull();
  });

  it("counts token accounts and NFTs from the latest snapshot", async () => {
    const counter = await t.token("counter");
    const wallet = await trackWallet(t, counter);
    await ingestAccounts(t, ingestor, [
      {
        address: wallet.address,
        balance: 1,
        tokenAccounts: [{ mint: MINTS.USDC, symbol: "USDC", balance: 1, usdValue: 1 }],
        nfts: [
          { mint: randomAddress(), name: "n1", collection: "c", floorPrice: 1 },
          { mint: randomAddress(), name: "n2", collection: "c", floorPrice: 2 },
        ],
      },
    ]);
    const [summary] = (await list("", counter)).json().wallets;
    expect(summary).toMatchObject({ tokenAccounts: 1, nftCount: 2 });
  });

  it("sorts by lastActivity, newest first, by default, with never-active wallets last", async () => {
    expect(await order("")).toEqual([2, 3, 0, ...byId(1, 4)]);
    expect(await order("?sortBy=lastActivity&order=desc")).toEqual([2, 3, 0, ...byId(1, 4)]);
  });

  it("sorts by lastActivity ascending with never-active wallets still last", async () => {
    expect(await order("?sortBy=lastActivity&order=asc")).toEqual([0, 3, 2, ...byId(1, 4)]);
  });

  it("sorts by balance both ways, ties broken by walletId", async () => {
    expect(await order("?sortBy=balance")).toEqual([1, 2, ...byId(0, 3), 4]);
    expect(await order("?sortBy=balance&order=asc")).toEqual([4, ...byId(0, 3), 2, 1]);
  });

  it("sorts by riskScore both ways, ties broken by walletId", async () => {
    expect(await order("?sortBy=riskScore&order=desc")).toEqual([3, ...byId(0, 2), 1, 4]);
    expect(await order("?sortBy=riskScore&order=asc")).toEqual([4, 1, ...byId(0, 2), 3]);
  });

  it("sorts by trackedAt both ways", async () => {
    expect(await order("?sortBy=trackedAt")).toEqual([4, 3, 2, 1, 0]);
    expect(await order("?sortBy=trackedAt&order=asc")).toEqual([0, 1, 2, 3, 4]);
  });

  it("pages with page 1 and limit 25 by default", async () => {
    const body = (await list("", pager)).json();
    expect(body).toMatchObject({ total: 27, page: 1, limit: 25 });
    expect(body.wallets).toHaveLength(25);
  });

  it("returns the last partial page, then an empty page past the end with the total", async () => {
    const second = (await list("?page=2", pager)).json();
    expect(second).toMatchObject({ total: 27, page: 2, limit: 25 });
    expect(second.wallets).toHaveLength(2);
    expect((await list("?page=3", pager)).json()).toEqual({ wallets: [], total: 27, page: 3, limit: 25 });
  });

  it("covers every wallet exactly once across pages", async () => {
    const seen: string[] = [];
    for (const page of [1, 2, 3]) {
      const body = (await list(`?page=${page}&limit=10&sortBy=trackedAt&order=asc`, pager)).json();
      seen.push(...body.wallets.map((x: { walletId: string }) => x.walletId));
    }
    expect(seen).toEqual(pages.map((x) => x.walletId));
    expect((await list("?limit=100", pager)).json().wallets).toHaveLength(27);
  });

  it("shows only the caller's wallets, and an empty list to a caller with none", async () => {
    expect((await list("", sorter)).json().total).toBe(5);
    expect((await list("", await t.token("nobody"))).json()).toEqual({ wallets: [], total: 0, page: 1, limit: 25 });
  });

  const badQueries: [string, string][] = [
    ["?limit=abc", "query.limit"],
    ["?limit=0", "query.limit"],
    ["?limit=101", "query.limit"],
    ["?limit=01", "query.limit"],
    ["?limit=-1", "query.limit"],
    ["?page=0", "query.page"],
    ["?page=1.5", "query.page"],
    ["?page=", "query.page"],
    ["?sortBy=name", "query.sortBy"],
    ["?order=up", "query.order"],
    ["?color=red", "query.color"],
  ];
  it.each(badQueries)("refuses %s with 400 naming %s", async (query, path) => {
    const body = expectProblem(await list(query), 400, "validation_failed");
    expect(errorPaths(body)).toContain(path);
  });

  it("needs the wallets:read scope", async () => {
    expectProblem(await list("", await t.token("sorter", "transactions:read")), 403, "forbidden");
  });
});
