// No input makes a 500: odd, hostile and malformed requests against every route family get
// a 4xx problem document (or succeed), and nothing is stored by a refused write.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { randomAddress, randomSignature } from "../helpers/chain.ts";

let t: TestApp;
let auth: Record<string, string>;
let walletId: string;
beforeAll(async () => {
  t = await startTestApp("hostile-input", { HELIUS_AUTH_HEADER: "helius-shared-secret-0123456789" });
  auth = { authorization: `Bearer ${await t.token("alice", undefined, { email: "a@example.com" })}` };
  walletId = (await t.app.inject({ method: "POST", url: "/v1/wallets", headers: auth, payload: { address: randomAddress() } })).json().walletId;
});
afterAll(async () => {
  await t.close();
});

const json = (payload: string) => ({ ...auth, "content-type": "application/json", payload });
const tx = (overrides: Record<string, unknown>) => ({
  signature: randomSignature(),
  type: "transfer",
  amount: 1,
  token: "SOL",
  from: randomAddress(),
  to: randomAddress(),
  blockTime: 1_760_000_000,
  slot: 1,
  fee: 0,
  status: "success",
  ...overrides,
});

type Case = [string, { method?: string; url: string; payload?: string; headers?: Record<string, string> }];
const cases = (): Case[] => [
  ["a NUL in a path id", { url: "/v1/wallets/%00" }],
  ["an id of 10,000 characters", { url: `/v1/wallets/${"w".repeat(10_000)}` }],
  ["SQL in a query value", { url: `/v1/transactions?walletId=${encodeURIComponent("' or 1=1 --")}` }],
  ["a repeated query parameter", { url: `/v1/transactions?walletId=${walletId}&limit=1&limit=2` }],
  ["an array-style query parameter", { url: `/v1/wallets?page[]=1` }],
  ["startTime beyond any date", { url: `/v1/transactions?walletId=${walletId}&startTime=99999999999999999999` }],
  ["a negative offset", { url: `/v1/transactions?walletId=${walletId}&offset=-1` }],
  ["a number too large for JSON (1e400)", { method: "POST", url: "/v1/ingest/transactions", payload: '{"transactions":[' + JSON.stringify(tx({})).replace('"amount":1', '"amount":1e400') + "]}" }],
  ["a NUL in a transaction's token", { method: "POST", url: "/v1/ingest/transactions", payload: JSON.stringify({ transactions: [tx({ token: "US\u0000DC" })] }) }],
  ["a negative amount", { method: "POST", url: "/v1/ingest/transactions", payload: JSON.stringify({ transactions: [tx({ amount: -5 })] }) }],
  ["a fractional slot", { method: "POST", url: "/v1/ingest/transactions", payload: JSON.stringify({ transactions: [tx({ slot: 1.5 })] }) }],
  ["a blockTime past year 9999", { method: "POST", url: "/v1/ingest/transactions", payload: JSON.stringify({ transactions: [tx({ blockTime: 1e15 })] }) }],
  ["__proto__ in a body", { method: "POST", url: "/v1/wallets", payload: '{"address":"' + randomAddress() + '","__proto__":{"admin":true}}' }],
  ["constructor.prototype in a body", { method: "POST", url: "/v1/wallets", payload: '{"address":"' + randomAddress() + '","constructor":{"prototype":{"x":1}}}' }],
  ["JSON nested 5,000 deep", { method: "POST", url: "/v1/risk/alerts", payload: "[".repeat(5000) + "]".repeat(5000) }],
  ["a JSON string instead of an object", { method: "POST", url: "/v1/wallets", payload: '"hello"' }],
  ["null as the body", { method: "POST", url: "/v1/wallets", payload: "null" }],
  ["an emoji alias of 64 code points", { method: "PATCH", url: `/v1/wallets/${walletId}`, payload: JSON.stringify({ alias: "🐋".repeat(64) }) }],
  ["a control character in an alias", { method: "PATCH", url: `/v1/wallets/${walletId}`, payload: JSON.stringify({ alias: "a\u0000b" }) }],
  ["a threshold of 1e308", { method: "POST", url: "/v1/risk/alerts", payload: JSON.stringify({ walletId, condition: "large_transfer", threshold: 1e308, notificationMethod: "email" }) }],
  ["a webhookUrl with a NUL", { method: "POST", url: "/v1/risk/alerts", payload: JSON.stringify({ walletId, condition: "unusual_activity", notificationMethod: "webhook", webhookUrl: "https://example.com/\u0000" }) }],
  ["a webhookUrl of a huge port", { method: "POST", url: "/v1/risk/alerts", payload: JSON.stringify({ walletId, condition: "unusual_activity", notificationMethod: "webhook", webhookUrl: "https://example.com:99999/" }) }],
  ["labels with a score of NaN-like text", { method: "PUT", url: "/v1/risk/labels", payload: '{"labels":[{"address":"' + randomAddress() + '","category":"mixer","score":"NaN"}]}' }],
  ["a Helius item with a negative fee", { method: "POST", url: "/v1/ingest/helius", payload: JSON.stringify([{ signature: randomSignature(), slot: 1, timestamp: 1, fee: -1, feePayer: randomAddress(), type: "TRANSFER" }]), headers: { authorization: "helius-shared-secret-0123456789", "content-type": "application/json" } }],
  ["an account snapshot with usdValue Infinity-like 1e999", { method: "POST", url: "/v1/ingest/accounts", payload: '{"accounts":[{"address":"' + randomAddress() + '","balance":1e999,"tokenAccounts":[],"nfts":[]}]}' }],
  ["a notification id that is not one", { url: "/v1/notifications/..%2f..%2fetc%2fpasswd" }],
  ["events of an alert id with a space", { url: "/v1/risk/alerts/alr%20x/events" }],
];

describe("hostile input", () => {
  it.each(cases())("answers %s without a 5xx, as problem+json when refused", async (_name, request) => {
    const response = await t.app.inject({
      method: (request.method ?? "GET") as "GET",
      url: request.url,
      headers: request.headers ?? (request.payload === undefined ? auth : json(request.payload)),
      ...(request.payload !== undefined ? { payload: request.payload } : {}),
    });
    expect(response.statusCode, response.body).toBeLessThan(500);
    if (response.statusCode >= 400) expect(response.headers["content-type"]).toContain("application/problem+json");
  });

  it("stored no transaction from the refused ingest batches", async () => {
    const [row] = await t.deps.sql<{ n: number }[]>`select count(*)::int as n from transactions`;
    expect(row!.n).toBe(0);
  });
});

describe("a NUL character in stored text", () => {
  const nul = "Mad Lad #1\u0000\u0000";
  const account = (nfts: unknown[], tokenAccounts: unknown[] = []) => ({ address: randomAddress(), balance: 1, tokenAccounts, nfts });
  const nft = (overrides: Record<string, unknown>) => ({ mint: randomAddress(), name: "Mad Lad #1", collection: "Mad Lads", floorPrice: 1, ...overrides });
  const label = (overrides: Record<string, unknown>) => ({ address: randomAddress(), category: "mixer", score: 90, ...overrides });
  const cases: Array<[string, { method: "POST" | "PUT" | "PATCH"; url: string; payload: Record<string, unknown> }, string]> = [
    ["a transaction's token", { method: "POST", url: "/v1/ingest/transactions", payload: { transactions: [tx({}), tx({ token: nul })] } }, "body.transactions.1.token"],
    ["a token account's symbol", { method: "POST", url: "/v1/ingest/accounts", payload: { accounts: [account([], [{ mint: randomAddress(), symbol: nul, balance: 1, usdValue: 1 }])] } }, "body.accounts.0.tokenAccounts.0.symbol"],
    ["the third snapshot's NFT name", { method: "POST", url: "/v1/ingest/accounts", payload: { accounts: [account([]), account([nft({})]), account([nft({ name: nul })])] } }, "body.accounts.2.nfts.0.name"],
    ["an NFT's collection", { method: "POST", url: "/v1/ingest/accounts", payload: { accounts: [account([nft({ collection: nul })])] } }, "body.accounts.0.nfts.0.collection"],
    ["a label's source", { method: "PUT", url: "/v1/risk/labels", payload: { labels: [label({}), label({ source: nul })] } }, "body.labels.1.source"],
    ["a wallet's alias", { method: "PATCH", url: `/v1/wallets/${walletId}`, payload: { alias: nul } }, "body.alias"],
    ["an alert's token filter", { method: "POST", url: "/v1/risk/alerts", payload: { walletId, condition: "large_transfer", threshold: 1, token: nul, notificationMethod: "email", recipient: "desk@example.com" } }, "body.token"],
    ["an alert's webhookUrl", { method: "POST", url: "/v1/risk/alerts", payload: { walletId, condition: "large_transfer", threshold: 1, notificationMethod: "webhook", webhookUrl: `https://example.com/${nul}` } }, "body.webhookUrl"],
    ["an alert's recipient", { method: "POST", url: "/v1/risk/alerts", payload: { walletId, condition: "large_transfer", threshold: 1, notificationMethod: "email", recipient: `desk${nul}@example.com` } }, "body.recipient"],
  ];

  it.each(cases)("refuses %s with a 400 whose errors[].path names it", async (_name, request, path) => {
    const res = await t.app.inject({ ...request, headers: auth });
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json().errors).toContainEqual({ path, message: "must not contain a NUL character (\\u0000)" });
  });
});
