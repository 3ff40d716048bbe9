// Requests for the contract test: the Helius fixtures, and one valid request for each /v1
// operation on ids nobody has, for the checks that come before any data is read (token,
// scope, parameters, media type, size) and for the answers of a broken or absent database.
import { readFileSync } from "node:fs";
import { randomAddress } from "./chain.ts";
import type { Request } from "./contract-client.ts";
import { makeTransaction } from "./seed.ts";

export const HELIUS_SECRET = "helius-contract-auth-header-0123456789";
/** The wallet the Helius fixtures move SOL and tokens for. */
export const HELIUS_WALLET = "63icgRv21T39FpUXik9i1qiPayCutuDXyg5z7VFc6uDB";
const HELIUS_FIXTURES = ["sol-transfer", "usdc-transfer", "swap", "nft-sale", "stake-sol", "failed-transfer", "unknown-type"];

/** One Helius delivery holding every fixture. */
export const helius = (): unknown[] =>
  HELIUS_FIXTURES.flatMap((name) => JSON.parse(readFileSync(new URL(`../fixtures/helius/${name}.json`, import.meta.url), "utf8")) as unknown[]);

const SAMPLE_WALLET = "wal_0000000000000000";
const SAMPLE_ALERT = "alr_0000000000000000";

/**
 * A valid request for each operation, on ids nobody has (what the framework checks first, and
 * 503s), or on the wallet and alert given (answers from real data).
 */
export function sampleRequest(key: string, ids: { walletId?: string; alertId?: string } = {}): Request {
  const { walletId = SAMPLE_WALLET, alertId = SAMPLE_ALERT } = ids;
  const samples: Record<string, Request> = {
    "GET /v1/wallets": { method: "GET", url: "/v1/wallets" },
    "POST /v1/wallets": { method: "POST", url: "/v1/wallets", payload: { address: randomAddress() } },
    "GET /v1/wallets/{walletId}": { method: "GET", url: `/v1/wallets/${walletId}` },
    "PATCH /v1/wallets/{walletId}": { method: "PATCH", url: `/v1/wallets/${walletId}`, payload: { alias: "Sample" } },
    "DELETE /v1/wallets/{walletId}": { method: "DELETE", url: `/v1/wallets/${walletId}` },
    "GET /v1/wallets/{walletId}/events": { method: "GET", url: `/v1/wallets/${walletId}/events` },
    "GET /v1/transactions": { method: "GET", url: `/v1/transactions?walletId=${walletId}` },
    "POST /v1/risk/alerts": {
      method: "POST",
      url: "/v1/risk/alerts",
      payload: { walletId, condition: "unusual_activity", notificationMethod: "sms", recipient: "+14155550123" },
    },
    "GET /v1/risk/alerts": { method: "GET", url: "/v1/risk/alerts" },
    "GET /v1/risk/alerts/{alertId}": { method: "GET", url: `/v1/risk/alerts/${alertId}` },
    "PATCH /v1/risk/alerts/{alertId}": { method: "PATCH", url: `/v1/risk/alerts/${alertId}`, payload: { status: "paused" } },
    "DELETE /v1/risk/alerts/{alertId}": { method: "DELETE", url: `/v1/risk/alerts/${alertId}` },
    "GET /v1/risk/alerts/{alertId}/events": { method: "GET", url: `/v1/risk/alerts/${alertId}/events` },
    "POST /v1/risk/alerts/{alertId}/test": { method: "POST", url: `/v1/risk/alerts/${alertId}/test` },
    "POST /v1/risk/alerts/{alertId}/rotate-secret": { method: "POST", url: `/v1/risk/alerts/${alertId}/rotate-secret` },
    "GET /v1/risk/alerts/{alertId}/notifications": { method: "GET", url: `/v1/risk/alerts/${alertId}/notifications` },
    "GET /v1/risk/alerts/{alertId}/history": { method: "GET", url: `/v1/risk/alerts/${alertId}/history` },
    "GET /v1/notifications/{notificationId}": { method: "GET", url: "/v1/notifications/ntf_0000000000000000" },
    "POST /v1/notifications/{notificationId}/redeliver": { method: "POST", url: "/v1/notifications/ntf_0000000000000000/redeliver" },
    "POST /v1/risk/alerts/{alertId}/notifications/redeliver": {
      method: "POST",
      url: `/v1/risk/alerts/${alertId}/notifications/redeliver`,
      payload: { since: "2026-01-01T00:00:00Z" },
    },
    "POST /v1/ingest/transactions": { method: "POST", url: "/v1/ingest/transactions", payload: { transactions: [makeTransaction()] } },
    "POST /v1/ingest/accounts": {
      method: "POST",
      url: "/v1/ingest/accounts",
      payload: { accounts: [{ address: randomAddress(), balance: 1, tokenAccounts: [], nfts: [] }] },
    },
    "POST /v1/ingest/helius": { method: "POST", url: "/v1/ingest/helius", payload: helius().slice(0, 1) },
    "PUT /v1/risk/labels": { method: "PUT", url: "/v1/risk/labels", payload: { labels: [{ address: randomAddress(), category: "scam", score: 90 }] } },
    "DELETE /v1/risk/labels": { method: "DELETE", url: "/v1/risk/labels", payload: { addresses: [randomAddress()] } },
    "GET /v1/risk/labels/{address}": { method: "GET", url: `/v1/risk/labels/${randomAddress()}` },
    "GET /v1/risk/labels/{address}/history": { method: "GET", url: `/v1/risk/labels/${randomAddress()}/history` },
  };
  const sample = samples[key];
  if (!sample) throw new Error(`no sample request for ${key}: add one, so the contract test reaches it`);
  return sample;
}
