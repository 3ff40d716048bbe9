// GET /v1/wallets?address= and ?tag= (extensions of interface 4.4): find one address's wallet,
// or one desk's wallets, without paging the whole book. The list cache is on (as in
// production), so a filtered page can never be answered with an unfiltered one.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { randomAddress } from "../helpers/chain.ts";
import { bearer, errorPaths, expectProblem, trackWallet, type WalletBody } from "../helpers/seed.ts";

let t: TestApp;
let fund: string;
let other: string;
/** The fund's wallets, in tracking order: 7 tagged desk-a (the first 2 also hot), 3 desk-b, 2 untagged. */
let deskA: WalletBody[];
let deskB: WalletBody[];
let untagged: WalletBody[];
/** An address both callers track, and one only the other caller tracks. */
let shared: string;
let othersOnly: string;
let fundShared: WalletBody;

beforeAll(async () => {
  t = await startTestApp("wallets-list-filters", { WALLET_LIST_CACHE_TTL: "1h" });
  [fund, other] = await Promise.all([t.token("fund"), t.token("other")]);
  deskA = [];
  for (let i = 0; i < 7; i++) deskA.push(await trackWallet(t, fund, { tags: i < 2 ? ["desk-a", "hot"] : ["desk-a"] }));
  deskB = [];
  for (let i = 0; i < 3; i++) deskB.push(await trackWallet(t, fund, { tags: ["desk-b"] }));
  untagged = [await trackWallet(t, fund), await trackWallet(t, fund, { alias: "cold" })];
  shared = randomAddress();
  othersOnly = randomAddress();
  fundShared = await trackWallet(t, fund, { address: shared, tags: ["shared"] });
  await trackWallet(t, other, { address: shared, tags: ["shared", "desk-a"] });
  await trackWallet(t, other, { address: othersOnly, tags: ["desk-a"] });
});
afterAll(async () => {
  await t.close();
});

const list = (query: string, token = fund) => t.app.inject({ url: `/v1/wallets${query}`, headers: bearer(token) });

async function ok(query: string, token = fund): Promise<{ wallets: { walletId: string; address: string }[]; total: number; page: number; limit: number }> {
  const res = await list(query, token);
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}
const ids = (body: { wallets: { walletId: string }[] }) => body.wallets.map((x) => x.walletId);
const idsOf = (wallets: WalletBody[]) => wallets.map((x) => x.walletId);

describe("GET /v1/wallets?address=", () => {
  it("answers the caller's wallet tracking the address, alone, with total 1", async () => {
    const target = deskB[1]!;
    const body = await ok(`?address=${target.address}`);
    expect(body).toMatchObject({ total: 1, page: 1, limit: 25 });
    expect(body.wallets).toHaveLength(1);
    expect(body.wallets[0]).toMatchObject({ walletId: target.walletId, address: target.address });
  });

  it("answers the caller's own wallet for an address another caller tracks too", async () => {
    const body = await ok(`?address=${shared}`);
    expect(body.total).toBe(1);
    expect(ids(body)).toEqual([fundShared.walletId]);
  });

  it("answers an empty list, total 0, for an address only another caller tracks", async () => {
    expect(await ok(`?address=${othersOnly}`)).toEqual({ wallets: [], total: 0, page: 1, limit: 25 });
  });

  it("answers an empty list, total 0, for an address no one tracks", async () => {
    expect(await ok(`?address=${randomAddress()}`)).toEqual({ wallets: [], total: 0, page: 1, limit: 25 });
  });

  it("is not answered from the unfiltered page in the cache", async () => {
    expect((await ok("?sortBy=trackedAt&order=asc")).total).toBe(13);
    expect(ids(await ok(`?address=${untagged[1]!.address}&sortBy=trackedAt&order=asc`))).toEqual([untagged[1]!.walletId]);
  });
});

describe("GET /v1/wallets?tag=", () => {
  it("answers only the caller's wallets carrying the tag, paged, with the filtered total", async () => {
    const query = "?tag=desk-a&sortBy=trackedAt&order=asc&limit=3";
    const pages = [await ok(`${query}&page=1`), await ok(`${query}&page=2`), await ok(`${query}&page=3`)];
    expect(pages.map((p) => p.total)).toEqual([7, 7, 7]);
    expect(pages.map((p) => p.wallets.length)).toEqual([3, 3, 1]);
    expect(pages.flatMap(ids)).toEqual(idsOf(deskA));
  });

  it("counts the filtered set on a page past the end too", async () => {
    expect(await ok("?tag=desk-a&limit=3&page=4")).toEqual({ wallets: [], total: 7, page: 4, limit: 3 });
  });

  it("keeps sortBy and order", async () => {
    expect(ids(await ok("?tag=desk-b&sortBy=trackedAt&order=desc"))).toEqual(idsOf(deskB).reverse());
  });

  it("matches one tag of several a wallet carries, and the whole tag only", async () => {
    expect(ids(await ok("?tag=hot&sortBy=trackedAt&order=asc"))).toEqual(idsOf(deskA.slice(0, 2)));
    expect(await ok("?tag=desk")).toMatchObject({ wallets: [], total: 0 });
  });

  it("answers an empty list for a tag only another caller's wallets carry, and shows none of theirs", async () => {
    expect((await ok("?tag=desk-a", other)).total).toBe(2);
    expect(await ok("?tag=desk-b", other)).toEqual({ wallets: [], total: 0, page: 1, limit: 25 });
    expect(ids(await ok("?tag=shared"))).toEqual([fundShared.walletId]);
  });
});

describe("GET /v1/wallets with address and tag", () => {
  it("answers the wallet when it carries the tag", async () => {
    const target = deskA[4]!;
    const body = await ok(`?address=${target.address}&tag=desk-a&sortBy=balance&order=asc&limit=1`);
    expect(body).toMatchObject({ total: 1, page: 1, limit: 1 });
    expect(ids(body)).toEqual([target.walletId]);
  });

  it("answers none when the caller's wallet does not carry the tag", async () => {
    expect(await ok(`?address=${deskB[0]!.address}&tag=desk-a`)).toEqual({ wallets: [], total: 0, page: 1, limit: 25 });
    expect(await ok(`?address=${untagged[0]!.address}&tag=desk-a`)).toEqual({ wallets: [], total: 0, page: 1, limit: 25 });
  });

  it("answers none when only another caller's wallet at the address carries the tag", async () => {
    expect(await ok(`?address=${shared}&tag=desk-a`)).toEqual({ wallets: [], total: 0, page: 1, limit: 25 });
  });
});

describe("GET /v1/wallets refuses a malformed filter", () => {
  const badQueries: [string, string][] = [
    ["?address=abc", "query.address"],
    ["?address=", "query.address"],
    // Base58 alphabet, right length, but 0, O, I and l are not base58.
    [`?address=${"0".repeat(32)}`, "query.address"],
    [`?address=${"l".repeat(44)}`, "query.address"],
    // Base58 and 44 characters, but more than 32 bytes decoded.
    [`?address=${"z".repeat(44)}`, "query.address"],
    [`?address=${randomAddress()}&address=${randomAddress()}`, "query.address"],
    ["?tag=", "query.tag"],
    ["?tag=Desk-A", "query.tag"],
    ["?tag=desk%20a", "query.tag"],
    [`?tag=${"a".repeat(33)}`, "query.tag"],
    ["?tag=desk-a&tag=desk-b", "query.tag"],
  ];
  it.each(badQueries)("refuses %s with 400 naming %s", async (query, path) => {
    const body = expectProblem(await list(query), 400, "validation_failed");
    expect(errorPaths(body)).toContain(path);
  });

  it("describes both filters in the OpenAPI document", async () => {
    const doc = (await t.app.inject({ url: "/v1/openapi.json" })).json();
    const parameters: { name: string; in: string; description?: string }[] = doc.paths["/v1/wallets"].get.parameters;
    const named = (name: string) => parameters.find((p) => p.in === "query" && p.name === name);
    expect(named("address")?.description).toMatch(/exact/i);
    expect(named("tag")?.description).toMatch(/one tag/i);
  });
});
