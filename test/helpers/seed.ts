// Builds test data through the public API, as a client would: track wallets, ingest
// transactions and account snapshots. Each helper fails loudly when the API refuses.
import type { Transaction } from "../../src/domain/types.ts";
import type { TestApp } from "./app.ts";
import { randomAddress, randomSignature } from "./chain.ts";

export type WalletBody = { walletId: string; address: string; alias: string | null; tags: string[]; [field: string]: unknown };
export type AccountSnapshotInput = {
  address: string;
  balance: number;
  tokenAccounts: { mint: string; symbol: string; balance: number; usdValue: number }[];
  nfts: { mint: string; name: string; collection: string; floorPrice: number }[];
};

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** A valid native-ingest transaction: 1.5 SOL between two random addresses, unless overridden. */
export function makeTransaction(overrides: Partial<Transaction> = {}): Transaction {
  return {
    signature: randomSignature(),
    type: "transfer",
    amount: 1.5,
    token: "SOL",
    from: randomAddress(),
    to: randomAddress(),
    blockTime: 1_717_000_000,
    slot: 268_000_000,
    fee: 0.000005,
    status: "success",
    ...overrides,
  };
}

/** POST /v1/wallets; returns the 201 body. */
export async function trackWallet(
  t: TestApp,
  token: string,
  body: { address?: string; alias?: string | null; tags?: string[] } = {},
): Promise<WalletBody> {
  const res = await t.app.inject({
    method: "POST",
    url: "/v1/wallets",
    headers: bearer(token),
    payload: { address: randomAddress(), ...body },
  });
  if (res.statusCode !== 201) throw new Error(`POST /v1/wallets answered ${res.statusCode}: ${res.body}`);
  return res.json();
}

/** POST /v1/ingest/transactions; returns the 202 body. */
export async function ingestTransactions(
  t: TestApp,
  token: string,
  transactions: Transaction[],
): Promise<{ accepted: number; duplicates: number }> {
  const res = await t.app.inject({
    method: "POST",
    url: "/v1/ingest/transactions",
    headers: bearer(token),
    payload: { transactions },
  });
  if (res.statusCode !== 202) throw new Error(`POST /v1/ingest/transactions answered ${res.statusCode}: ${res.body}`);
  return res.json();
}

/** POST /v1/ingest/accounts; returns the 202 body. */
export async function ingestAccounts(t: TestApp, token: string, accounts: AccountSnapshotInput[]): Promise<{ accepted: number }> {
  const res = await t.app.inject({
    method: "POST",
    url: "/v1/ingest/accounts",
    headers: bearer(token),
    payload: { accounts },
  });
  if (res.statusCode !== 202) throw new Error(`POST /v1/ingest/accounts answered ${res.statusCode}: ${res.body}`);
  return res.json();
}

/** Asserts a problem+json answer with the given status and code, and returns its body. */
export function expectProblem(
  res: { statusCode: number; headers: Record<string, unknown>; json: () => unknown },
  status: number,
  code: string,
): { detail: string; errors?: { path: string; message: string }[]; requestId: string } {
  const body = res.json() as { status: number; code: string; detail: string; requestId: string; errors?: { path: string; message: string }[] };
  if (res.statusCode !== status || body.code !== code) {
    throw new Error(`expected ${status} ${code}, got ${res.statusCode}: ${JSON.stringify(body)}`);
  }
  if (!String(res.headers["content-type"]).startsWith("application/problem+json")) {
    throw new Error(`expected application/problem+json, got ${String(res.headers["content-type"])}`);
  }
  if (body.status !== status || typeof body.requestId !== "string" || body.requestId === "") {
    throw new Error(`problem body lacks status or requestId: ${JSON.stringify(body)}`);
  }
  return body;
}

/** The paths named by a 400 problem's errors. */
export const errorPaths = (body: { errors?: { path: string }[] }): string[] => (body.errors ?? []).map((e) => e.path);
