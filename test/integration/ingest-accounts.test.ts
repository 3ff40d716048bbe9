import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { MINTS, randomAddress } from "../helpers/chain.ts";
import { bearer, errorPaths, expectProblem, ingestAccounts, trackWallet, type AccountSnapshotInput } from "../helpers/seed.ts";

let t: TestApp;
let alice: string;
let ingestor: string;
beforeAll(async () => {
  t = await startTestApp("ingest-accounts");
  [alice, ingestor] = await Promise.all([t.token("alice"), t.token("ingestor", "ingest:write")]);
});
afterAll(async () => {
  await t.close();
});

const post = (payload: unknown, token = ingestor) =>
  t.app.inject({ method: "POST", url: "/v1/ingest/accounts", headers: bearer(token), payload: payload as object });

const snapshot = (address: string, overrides: Partial<AccountSnapshotInput> = {}): AccountSnapshotInput => ({
  address,
  balance: 3.25,
  tokenAccounts: [{ mint: MINTS.USDC, symbol: "USDC", balance: 10, usdValue: 10 }],
  nfts: [{ mint: randomAddress(), name: "Claynosaurz #7", collection: "Claynosaurz", floorPrice: 310.5 }],
  ...overrides,
});

async function detail(walletId: string) {
  const res = await t.app.inject({ url: `/v1/wallets/${walletId}`, headers: bearer(alice) });
  expect(res.statusCode).toBe(200);
  return res.json();
}

async function summary(walletId: string) {
  const res = await t.app.inject({ url: "/v1/wallets?limit=100", headers: bearer(alice) });
  return res.json().wallets.find((w: { walletId: string }) => w.walletId === walletId);
}

describe("POST /v1/ingest/accounts", () => {
  it("stores a snapshot that the wallet detail and the list then show", async () => {
    const wallet = await trackWallet(t, alice);
    const sent = snapshot(wallet.address);
    const res = await post({ accounts: [sent] });
    expect(res.statusCode).toBe(202);
    expect(res.json()).toEqual({ accepted: 1 });
    expect(await detail(wallet.walletId)).toMatchObject({ balance: 3.25, tokenAccounts: sent.tokenAccounts, nfts: sent.nfts });
    expect(await summary(wallet.walletId)).toMatchObject({ balance: 3.25, tokenAccounts: 1, nftCount: 1 });
  });

  it("replaces the previous snapshot whole: lists, balance and counts", async () => {
    const wallet = await trackWallet(t, alice);
    await ingestAccounts(t, ingestor, [
      snapshot(wallet.address, {
        tokenAccounts: [
          { mint: MINTS.USDC, symbol: "USDC", balance: 10, usdValue: 10 },
          { mint: MINTS.BONK, symbol: "BONK", balance: 5, usdValue: 0.01 },
        ],
      }),
    ]);
    const next = snapshot(wallet.address, {
      balance: 0.5,
      tokenAccounts: [{ mint: MINTS.JUP, symbol: "JUP", balance: 7, usdValue: 6.3 }],
      nfts: [],
    });
    expect(await ingestAccounts(t, ingestor, [next])).toEqual({ accepted: 1 });
    const body = await detail(wallet.walletId);
    expect(body).toMatchObject({ balance: 0.5, tokenAccounts: next.tokenAccounts, nfts: [] });
    expect(await summary(wallet.walletId)).toMatchObject({ balance: 0.5, tokenAccounts: 1, nftCount: 0 });
    const rows = await t.deps.sql`select mint from token_accounts where address = ${wallet.address}`;
    expect(rows.map((row) => row.mint)).toEqual([MINTS.JUP]);
  });

  it("keeps the address's risk score and last activity when a snapshot arrives", async () => {
    const wallet = await trackWallet(t, alice);
    await t.deps.sql`update address_state set risk_score = 33 where address = ${wallet.address}`;
    await t.deps.sql`insert into address_activity (address, last_activity) values (${wallet.address}, 1700000000)`;
    await ingestAccounts(t, ingestor, [snapshot(wallet.address)]);
    expect(await detail(wallet.walletId)).toMatchObject({ riskScore: 33, lastActivity: "2023-11-14T22:13:20.000Z" });
  });

  it("stores snapshots of untracked addresses, several in one call", async () => {
    const addresses = [randomAddress(), randomAddress(), randomAddress()];
    expect(await ingestAccounts(t, ingestor, addresses.map((address) => snapshot(address)))).toEqual({ accepted: 3 });
    const rows = await t.deps.sql`
      select address, balance::float8 as balance, token_account_count, nft_count from address_state
      where address = any(${addresses}::text[])`;
    expect(rows).toHaveLength(3);
    expect(rows.every((row) => row.balance === 3.25 && row.token_account_count === 1 && row.nft_count === 1)).toBe(true);
  });

  it("refuses an address twice in one batch and a mint twice in one list, naming the repeat", async () => {
    const address = randomAddress();
    const twice = expectProblem(await post({ accounts: [snapshot(address), snapshot(address)] }), 400, "validation_failed");
    expect(errorPaths(twice)).toEqual(["body.accounts.1.address"]);
    const nft = { mint: MINTS.BONK, name: "x", collection: "y", floorPrice: 1 };
    const mints = expectProblem(await post({ accounts: [snapshot(address, { nfts: [nft, nft] })] }), 400, "validation_failed");
    expect(errorPaths(mints)).toEqual(["body.accounts.0.nfts.1.mint"]);
    expect(await t.deps.sql`select 1 from address_state where address = ${address}`).toHaveLength(0);
  });

  const invalid: [string, string, Record<string, unknown>][] = [
    ["a bad address", "body.accounts.0.address", { address: "nope" }],
    ["a negative balance", "body.accounts.0.balance", { balance: -1 }],
    ["a balance sent as a string", "body.accounts.0.balance", { balance: "1" }],
    ["a token account with a bad mint", "body.accounts.0.tokenAccounts.0.mint", { tokenAccounts: [{ mint: "USDC", symbol: "USDC", balance: 1, usdValue: 1 }] }],
    ["a token account without usdValue", "body.accounts.0.tokenAccounts.0.usdValue", { tokenAccounts: [{ mint: MINTS.USDC, symbol: "USDC", balance: 1 }] }],
    ["an NFT with an unknown field", "body.accounts.0.nfts.0.rarity", { nfts: [{ mint: MINTS.USDC, name: "a", collection: "b", floorPrice: 1, rarity: 3 }] }],
    ["a missing nfts list", "body.accounts.0.nfts", { nfts: undefined }],
    ["an unknown field", "body.accounts.0.owner", { owner: "x" }],
  ];
  it.each(invalid)("refuses %s with 400 naming %s", async (_what, path, overrides) => {
    const body = expectProblem(await post({ accounts: [{ ...snapshot(randomAddress()), ...overrides }] }), 400, "validation_failed");
    expect(errorPaths(body)).toContain(path);
  });

  it("refuses an empty batch and one of more than 1000 accounts", async () => {
    expect(errorPaths(expectProblem(await post({ accounts: [] }), 400, "validation_failed"))).toContain("body.accounts");
    const many = Array.from({ length: 1001 }, () => ({ address: randomAddress(), balance: 0, tokenAccounts: [], nfts: [] }));
    expect(errorPaths(expectProblem(await post({ accounts: many }), 400, "validation_failed"))).toContain("body.accounts");
  });

  it("needs the ingest:write scope", async () => {
    const walletsOnly = await t.token("alice", "wallets:read wallets:write");
    expectProblem(await post({ accounts: [snapshot(randomAddress())] }, walletsOnly), 403, "forbidden");
  });
});
