import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { base58Encode } from "../../src/domain/base58.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { MINTS, randomAddress } from "../helpers/chain.ts";
import {
  bearer,
  errorPaths,
  expectProblem,
  ingestAccounts,
  ingestTransactions,
  makeTransaction,
  trackWallet,
} from "../helpers/seed.ts";

let t: TestApp;
let alice: string;
let bob: string;
let ingestor: string;
beforeAll(async () => {
  t = await startTestApp("wallets");
  [alice, bob, ingestor] = await Promise.all([t.token("alice"), t.token("bob"), t.token("ingestor", "ingest:write")]);
});
afterAll(async () => {
  await t.close();
});

const request = (method: "GET" | "POST" | "PATCH" | "DELETE", url: string, token: string, payload?: unknown) =>
  t.app.inject({ method, url, headers: bearer(token), ...(payload === undefined ? {} : { payload: payload as object }) });

const DETAIL_FIELDS = [
  "walletId",
  "address",
  "alias",
  "balance",
  "tokenAccounts",
  "nfts",
  "riskScore",
  "riskFactors",
  "label",
  "tags",
  "trackedAt",
  "lastActivity",
  "balanceAsOf",
].sort();

describe("POST /v1/wallets", () => {
  it("tracks an address: 201, Location, and the wallet detail with empty chain facts", async () => {
    const address = randomAddress();
    const res = await request("POST", "/v1/wallets", alice, { address, alias: "Treasury", tags: ["cold", "ops_1"] });
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(body.walletId).toMatch(/^wal_[0-9a-z]{26}$/);
    expect(res.headers.location).toBe(`/v1/wallets/${body.walletId}`);
    expect(Object.keys(body).sort()).toEqual(DETAIL_FIELDS);
    expect(body).toMatchObject({
      address,
      alias: "Treasury",
      balance: 0,
      tokenAccounts: [],
      nfts: [],
      riskScore: 0,
      riskFactors: [],
      label: null,
      tags: ["cold", "ops_1"],
      lastActivity: null,
      balanceAsOf: null,
    });
    expect(new Date(body.trackedAt).toISOString()).toBe(body.trackedAt);
  });

  it("defaults alias to null and tags to an empty list", async () => {
    const wallet = await trackWallet(t, alice);
    expect(wallet.alias).toBeNull();
    expect(wallet.tags).toEqual([]);
  });

  it("answers 409 when the caller already tracks the address, and lets another caller track it", async () => {
    const address = randomAddress();
    await trackWallet(t, alice, { address });
    expectProblem(await request("POST", "/v1/wallets", alice, { address }), 409, "conflict");
    const bobs = await trackWallet(t, bob, { address });
    expect(bobs.address).toBe(address);
  });

  it("names the wallet the caller already has in a 409, with its Location, so a retried create can find it", async () => {
    const address = randomAddress();
    const first = await trackWallet(t, alice, { address });
    const retry = await request("POST", "/v1/wallets", alice, { address });
    expectProblem(retry, 409, "conflict");
    expect(retry.headers.location).toBe(`/v1/wallets/${first.walletId}`);
    expect(retry.json().detail).toContain(first.walletId);
  });

  it("answers one of two simultaneous requests for the same address with 201 and the other with 409", async () => {
    const address = randomAddress();
    const answers = await Promise.all([1, 2].map(() => request("POST", "/v1/wallets", alice, { address })));
    expect(answers.map((res) => res.statusCode).sort()).toEqual([201, 409]);
  });

  it("shows the activity an address had before it was tracked", async () => {
    const address = randomAddress();
    await ingestTransactions(t, ingestor, [makeTransaction({ from: address, blockTime: 1_600_000_000 })]);
    const wallet = await trackWallet(t, alice, { address });
    expect(wallet.lastActivity).toBe("2020-09-13T12:26:40.000Z");
  });

  const invalidBodies: [string, string, Record<string, unknown>][] = [
    ["an address with characters outside base58", "body.address", { address: "0OIl".repeat(10) }],
    ["an address that decodes to 31 bytes", "body.address", { address: base58Encode(randomBytes(31)) }],
    ["a missing address", "body.address", { address: undefined }],
    ["an alias over 64 characters", "body.alias", { alias: "x".repeat(65) }],
    ["an empty alias", "body.alias", { alias: "" }],
    ["a tag with upper-case letters", "body.tags.0", { tags: ["Cold"] }],
    ["a tag over 32 characters", "body.tags.0", { tags: ["x".repeat(33)] }],
    ["more than 20 tags", "body.tags", { tags: Array.from({ length: 21 }, (_, i) => `t${i}`) }],
    ["the same tag twice", "body.tags.1", { tags: ["a", "a"] }],
    ["tags that are not a list", "body.tags", { tags: "cold" }],
    ["an unknown field", "body.color", { color: "red" }],
  ];
  it.each(invalidBodies)("refuses %s with 400 naming %s", async (_what, path, body) => {
    const res = await request("POST", "/v1/wallets", alice, { address: randomAddress(), ...body });
    expect(errorPaths(expectProblem(res, 400, "validation_failed"))).toContain(path);
  });

  it("refuses a non-JSON content type with 415 and a body over 1 MiB with 413", async () => {
    const text = await t.app.inject({
      method: "POST",
      url: "/v1/wallets",
      headers: { ...bearer(alice), "content-type": "text/plain" },
      payload: "address",
    });
    expectProblem(text, 415, "unsupported_media_type");
    const big = await t.app.inject({
      method: "POST",
      url: "/v1/wallets",
      headers: { ...bearer(alice), "content-type": "application/json" },
      payload: JSON.stringify({ address: randomAddress(), alias: "x".repeat(1024 * 1024) }),
    });
    expectProblem(big, 413, "payload_too_large");
  });

  it("needs the wallets:write scope", async () => {
    const reader = await t.token("alice", "wallets:read");
    expectProblem(await request("POST", "/v1/wallets", reader, { address: randomAddress() }), 403, "forbidden");
  });
});

describe("GET /v1/wallets/{walletId}", () => {
  it("shows every field of the detail with its type, from snapshots and transactions", async () => {
    const wallet = await trackWallet(t, alice, { alias: "Hot", tags: ["hot"] });
    await ingestAccounts(t, ingestor, [
      {
        address: wallet.address,
        balance: 12.5,
        tokenAccounts: [
          { mint: MINTS.BONK, symbol: "BONK", balance: 1_000_000, usdValue: 25.5 },
          { mint: MINTS.USDC, symbol: "USDC", balance: 300.25, usdValue: 300.25 },
        ],
        nfts: [{ mint: randomAddress(), name: "Mad Lad #1", collection: "Mad Lads", floorPrice: 5000 }],
      },
    ]);
    await ingestTransactions(t, ingestor, [makeTransaction({ to: wallet.address, blockTime: 1_717_171_717 })]);
    await t.deps.sql`update address_state set risk_score = 42, risk_factors = '{high_velocity}' where address = ${wallet.address}`;

    const res = await request("GET", `/v1/wallets/${wallet.walletId}`, alice);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual(DETAIL_FIELDS);
    expect(body).toEqual({
      walletId: wallet.walletId,
      address: wallet.address,
      alias: "Hot",
      balance: 12.5,
      tokenAccounts: [
        { mint: MINTS.USDC, symbol: "USDC", balance: 300.25, usdValue: 300.25 },
        { mint: MINTS.BONK, symbol: "BONK", balance: 1_000_000, usdValue: 25.5 },
      ],
      nfts: [{ mint: expect.any(String), name: "Mad Lad #1", collection: "Mad Lads", floorPrice: 5000 }],
      riskScore: 42,
      riskFactors: ["high_velocity"],
      label: null,
      tags: ["hot"],
      trackedAt: wallet.trackedAt,
      lastActivity: "2024-05-31T16:08:37.000Z",
      balanceAsOf: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
  });

  it("shows the address's own label, which is no factor of its own score", async () => {
    const wallet = await trackWallet(t, alice);
    const labels = [{ address: wallet.address, category: "sanctioned", score: 100, source: "ofac-sdn" }];
    const put = await t.app.inject({ method: "PUT", url: "/v1/risk/labels", headers: { authorization: `Bearer ${alice}` }, payload: { labels } });
    expect(put.statusCode).toBe(200);
    const body = (await request("GET", `/v1/wallets/${wallet.walletId}`, alice)).json();
    expect(body).toMatchObject({ label: { category: "sanctioned", score: 100, source: "ofac-sdn" }, riskScore: 0, riskFactors: [] });
  });

  it("answers 404 problem+json for an unknown id and for another caller's wallet", async () => {
    const wallet = await trackWallet(t, alice);
    expectProblem(await request("GET", "/v1/wallets/wal_unknown", alice), 404, "not_found");
    expectProblem(await request("GET", `/v1/wallets/${wallet.walletId}`, bob), 404, "not_found");
  });

  it("needs a token (401) with the wallets:read scope (403)", async () => {
    const wallet = await trackWallet(t, alice);
    expectProblem(await t.app.inject({ url: `/v1/wallets/${wallet.walletId}` }), 401, "unauthorized");
    const writer = await t.token("alice", "wallets:write");
    expectProblem(await request("GET", `/v1/wallets/${wallet.walletId}`, writer), 403, "forbidden");
  });
});

describe("PATCH /v1/wallets/{walletId}", () => {
  it("changes the alias and the tags, each alone, and clears the alias with null", async () => {
    const wallet = await trackWallet(t, alice, { alias: "Before", tags: ["a"] });
    const url = `/v1/wallets/${wallet.walletId}`;
    const renamed = await request("PATCH", url, alice, { alias: "After" });
    expect(renamed.statusCode).toBe(200);
    expect(renamed.json()).toMatchObject({ alias: "After", tags: ["a"] });
    expect((await request("PATCH", url, alice, { tags: ["b", "c"] })).json()).toMatchObject({ alias: "After", tags: ["b", "c"] });
    expect((await request("PATCH", url, alice, { alias: null, tags: [] })).json()).toMatchObject({ alias: null, tags: [] });
    expect((await request("GET", url, alice)).json()).toMatchObject({ alias: null, tags: [] });
  });

  it("refuses an empty body, an unknown field and a bad tag with 400", async () => {
    const wallet = await trackWallet(t, alice);
    const url = `/v1/wallets/${wallet.walletId}`;
    expectProblem(await request("PATCH", url, alice, {}), 400, "validation_failed");
    expect(errorPaths(expectProblem(await request("PATCH", url, alice, { address: randomAddress() }), 400, "validation_failed"))).toContain(
      "body.address",
    );
    expect(errorPaths(expectProblem(await request("PATCH", url, alice, { tags: ["no spaces"] }), 400, "validation_failed"))).toContain(
      "body.tags.0",
    );
  });

  it("answers 404 for another caller's wallet and leaves it unchanged", async () => {
    const wallet = await trackWallet(t, alice, { alias: "Mine" });
    expectProblem(await request("PATCH", `/v1/wallets/${wallet.walletId}`, bob, { alias: "Yours" }), 404, "not_found");
    expect((await request("GET", `/v1/wallets/${wallet.walletId}`, alice)).json().alias).toBe("Mine");
  });
});

describe("DELETE /v1/wallets/{walletId}", () => {
  it("deletes the wallet with 204 and its alerts with it", async () => {
    const wallet = await trackWallet(t, alice);
    await t.deps.sql`
      insert into alerts (id, owner, wallet_id, condition, threshold, notification_method, recipient)
      values ('alr_test', 'alice', ${wallet.walletId}, 'large_transfer', 100, 'email', 'a@example.com')`;
    const res = await request("DELETE", `/v1/wallets/${wallet.walletId}`, alice);
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe("");
    expectProblem(await request("GET", `/v1/wallets/${wallet.walletId}`, alice), 404, "not_found");
    expect(await t.deps.sql`select id from alerts where id = 'alr_test'`).toHaveLength(0);
    expectProblem(await request("DELETE", `/v1/wallets/${wallet.walletId}`, alice), 404, "not_found");
  });

  it("answers 404 for another caller's wallet and keeps it", async () => {
    const wallet = await trackWallet(t, alice);
    expectProblem(await request("DELETE", `/v1/wallets/${wallet.walletId}`, bob), 404, "not_found");
    expect((await request("GET", `/v1/wallets/${wallet.walletId}`, alice)).statusCode).toBe(200);
  });
});
