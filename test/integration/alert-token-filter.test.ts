// A large_transfer alert's token filter is only accepted when it can match: trimmed, a
// well-known symbol (WSOL for SOL) or a mint address. Any other symbol is refused: Helius names
// such a token by its mint alone, and a symbol is whatever a token's creator chose
// (src/domain/alert-settings.ts tokenFilter). End to end: API → Postgres → BullMQ worker.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WELL_KNOWN_TOKENS, WRAPPED_SOL_MINT } from "../../src/domain/tokens.ts";
import type { HeliusTransaction } from "../../src/ingest/helius.ts";
import type { RunningWorkers } from "../../src/queue/run-workers.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { fieldErrors, problem } from "../helpers/alert-fixtures.ts";
import { MINTS, randomAddress, randomSignature } from "../helpers/chain.ts";
import { createAlert, eventsOf, settled, startWorkers, track, tx } from "../helpers/pipeline.ts";
import { bearer, ingestTransactions } from "../helpers/seed.ts";

const SECRET = "alert-token-filter-test-auth-0123";
/** A mint outside the well-known list (POPCAT's). */
const UNLISTED_MINT = "7GCihgDB8fe6KNjn2MYtkzZcRjQy3t9GHdC8uHYmW2hr";
const now = Math.floor(Date.now() / 1000);

let t: TestApp;
let workers: RunningWorkers;
let token: string;
let walletId: string;

beforeAll(async () => {
  t = await startTestApp("alert-token-filter", { HELIUS_AUTH_HEADER: SECRET });
  workers = startWorkers(t);
  token = await t.token("desk");
  ({ walletId } = await track(t, token));
});
afterAll(async () => {
  await workers.close();
  await t.close();
});

const create = (filter: string) =>
  t.app.inject({
    method: "POST",
    url: "/v1/risk/alerts",
    headers: bearer(token),
    payload: { walletId, condition: "large_transfer", threshold: 10, token: filter, notificationMethod: "webhook", webhookUrl: "http://127.0.0.1:9/hook" },
  });

const alertCount = async () => (await t.deps.sql<{ n: number }[]>`select count(*)::int as n from alerts`)[0]!.n;

async function deliverHelius(items: HeliusTransaction[]): Promise<void> {
  const res = await t.app.inject({ method: "POST", url: "/v1/ingest/helius", headers: { authorization: SECRET }, payload: items });
  expect(res.statusCode, res.body).toBe(202);
  await settled(t);
}

/** A Helius TRANSFER item moving `amount` of `mint` from `from` to `to` through token accounts. */
const tokenTransfer = (from: string, to: string, mint: string, amount: number, timestamp: number): HeliusTransaction => ({
  signature: randomSignature(),
  slot: 300_000_000 + timestamp,
  timestamp,
  fee: 5000,
  feePayer: from,
  type: "TRANSFER",
  transactionError: null,
  nativeTransfers: [],
  tokenTransfers: [
    { fromUserAccount: from, toUserAccount: to, fromTokenAccount: randomAddress(), toTokenAccount: randomAddress(), mint, tokenAmount: amount },
  ],
});

describe("POST /v1/risk/alerts: the large_transfer token filter", () => {
  it.each([
    ["SOL ", "SOL"],
    ["  usdc\t", "usdc"],
    [" WSOL", "WSOL"],
    ["wSOL\n", "wSOL"],
    [` ${UNLISTED_MINT} `, UNLISTED_MINT],
  ])("accepts %j and stores it trimmed as %j", async (given, stored) => {
    const res = await create(given);
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().token).toBe(stored);
  });

  it.each(["   ", "\t"])("refuses a filter of only spaces (%j) with 400 naming body.token, and stores nothing", async (blank) => {
    const before = await alertCount();
    expect(fieldErrors(await create(blank))).toEqual(["body.token must name the token (a well-known symbol or a mint address), not only spaces"]);
    expect(await alertCount()).toBe(before);
  });

  it.each(["POPCAT", "SOL2", "USDC.e"])(
    "refuses %j, a symbol outside the well-known list, with a 400 that names the well-known symbols and asks for the mint address",
    async (symbol) => {
      const before = await alertCount();
      const res = await create(symbol);
      const body = problem(res, 400, "validation_failed");
      expect(body.errors).toHaveLength(1);
      const [error] = body.errors!;
      expect(error!.path).toBe("body.token");
      for (const known of WELL_KNOWN_TOKENS) expect(error!.message).toContain(known.symbol);
      expect(error!.message).toContain("give the token's mint address instead");
      expect(body.detail).toContain("token is neither a well-known symbol");
      expect(await alertCount()).toBe(before);
    },
  );

  it("refuses the USDC mint in lower case (another mint, which USDC never matches) with a 400 naming the mint meant, and stores nothing", async () => {
    const before = await alertCount();
    expect(fieldErrors(await create(MINTS.USDC.toLowerCase()))).toEqual([
      `body.token is a well-known mint in other letter case, which is another mint; mints are case-sensitive: did you mean ${MINTS.USDC}?`,
    ]);
    expect(await alertCount()).toBe(before);
    expect((await create(MINTS.USDC)).statusCode).toBe(201);
  });
});

describe("a large_transfer alert with a filter that used to be stored as given", () => {
  it("fires for `SOL ` (a trailing space) on a SOL transfer", async () => {
    const wallet = await track(t, token);
    const alertId = await createAlert(t, token, { walletId: wallet.walletId, condition: "large_transfer", threshold: 10, token: "SOL " });
    await ingestTransactions(t, token, [tx({ from: randomAddress(), to: wallet.address, amount: 15, token: "SOL", blockTime: now - 30 })]);
    await settled(t);
    expect((await eventsOf(t, alertId)).map((e) => e.observed)).toEqual([15]);
  });

  it("fires for WSOL on wrapped SOL from Helius and on native SOL, never on another token", async () => {
    const wallet = await track(t, token);
    const alertId = await createAlert(t, token, { walletId: wallet.walletId, condition: "large_transfer", threshold: 10, token: "WSOL" });
    const sender = randomAddress();
    await deliverHelius([
      tokenTransfer(sender, wallet.address, WRAPPED_SOL_MINT, 20, now - 20),
      tokenTransfer(sender, wallet.address, UNLISTED_MINT, 50_000, now - 19),
      tokenTransfer(sender, wallet.address, MINTS.USDC, 40, now - 18),
    ]);
    await ingestTransactions(t, token, [tx({ from: wallet.address, to: sender, amount: 12, token: "SOL", blockTime: now - 10 })]);
    await settled(t);
    expect((await eventsOf(t, alertId)).map((e) => e.observed)).toEqual([20, 12]);
  });

  it("fires for a token outside the well-known list named by its mint with spaces around it, as Helius stores it", async () => {
    const wallet = await track(t, token);
    const alertId = await createAlert(t, token, { walletId: wallet.walletId, condition: "large_transfer", threshold: 10, token: ` ${UNLISTED_MINT} ` });
    await deliverHelius([tokenTransfer(randomAddress(), wallet.address, UNLISTED_MINT, 50_000, now - 5)]);
    expect((await eventsOf(t, alertId)).map((e) => e.observed)).toEqual([50_000]);
  });
});
