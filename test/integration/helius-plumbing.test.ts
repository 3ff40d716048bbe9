// The security reviews' drains of 2026-11-28, end to end: Helius items through POST
// /v1/ingest/helius, Postgres and a real worker. A tracked hot wallet sends 40,000 SOL into an
// attacker's token account beside a dust token transfer naming it (the SOL sent to the account's
// owner); into a token account the hot wallet nominally owns, whose close authority is the
// attacker's (the SOL sent to that account: beyond 0.01 SOL of rent, only a wrap a token
// transfer shows leaving is plumbing); and through an account given two users (counted once).
// And a native transfer with an empty side: refused and kept, not stored as sent to the payer.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { NotificationPayload } from "../../src/domain/types.ts";
import { WRAPPED_SOL_MINT } from "../../src/domain/tokens.ts";
import type { HeliusTransaction } from "../../src/ingest/helius.ts";
import type { RunningWorkers } from "../../src/queue/run-workers.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { randomAddress, randomSignature } from "../helpers/chain.ts";
import { createAlert, eventsOf, putLabels, settled, startWorkers, track } from "../helpers/pipeline.ts";
import { bearer } from "../helpers/seed.ts";

const SECRET = "helius-plumbing-auth-header-01234";
const LAMPORTS = 1_000_000_000;
const now = Math.floor(Date.now() / 1000);

let t: TestApp;
let workers: RunningWorkers;
let token: string;

beforeAll(async () => {
  t = await startTestApp("helius-plumbing", { HELIUS_AUTH_HEADER: SECRET });
  workers = startWorkers(t);
  token = await t.token("hot-wallet-desk");
});
afterAll(async () => {
  await workers.close();
  await t.close();
});

const post = (items: HeliusTransaction[]) =>
  t.app.inject({ method: "POST", url: "/v1/ingest/helius", headers: { authorization: SECRET }, payload: items });

const transfer = (feePayer: string, over: Partial<HeliusTransaction>): HeliusTransaction => ({
  signature: randomSignature(),
  slot: 300_000_000 + now,
  timestamp: now,
  fee: 5000,
  feePayer,
  type: "TRANSFER",
  transactionError: null,
  nativeTransfers: [],
  tokenTransfers: [],
  ...over,
});

const reasonsOf = async (alertId: string) =>
  (
    await t.deps.sql<{ payload: NotificationPayload }[]>`
      select n.payload from notifications n join alert_events e on e.id = n.event_id where e.alert_id = ${alertId}`
  ).map((row) => row.payload.data);

describe("40,000 SOL sent into an attacker's token account beside a dust token transfer naming it", () => {
  it("fires large_transfer and suspicious_counterparty on the SOL sent to the account's sanctioned owner, and is in the wallet's history", async () => {
    const [attacker, attackerAccount] = [randomAddress(), randomAddress()];
    expect((await putLabels(t, token, [{ address: attacker, category: "sanctioned", score: 100 }])).statusCode).toBe(200);
    const hot = await track(t, token);
    const large = await createAlert(t, token, { walletId: hot.walletId, condition: "large_transfer", threshold: 1_000, token: "SOL" });
    const suspicious = await createAlert(t, token, { walletId: hot.walletId, condition: "suspicious_counterparty", threshold: 75 });
    const drain = transfer(hot.address, {
      nativeTransfers: [{ fromUserAccount: hot.address, toUserAccount: attackerAccount, amount: 40_000 * LAMPORTS }],
      // The attacker's own dust: the hot wallet is on no token transfer at all.
      tokenTransfers: [
        { fromUserAccount: attacker, toUserAccount: attacker, fromTokenAccount: randomAddress(), toTokenAccount: attackerAccount, mint: WRAPPED_SOL_MINT, tokenAmount: 0.000000001 },
      ],
    });
    const res = await post([drain]);
    expect(res.json()).toEqual({ accepted: 1, duplicates: 0, skipped: 0, rejected: [] });
    await settled(t);

    expect(await eventsOf(t, large)).toMatchObject([{ dedupeKey: drain.signature, observed: 40_000, suppressed: false }]);
    const [fired] = await reasonsOf(large);
    expect(fired!.reason).toMatch(/^Sent 40,000 SOL to /);
    expect(fired).toMatchObject({ direction: "sent", counterparty: { address: attacker, risk: 100 } });
    expect(await eventsOf(t, suspicious)).toMatchObject([{ dedupeKey: drain.signature, observed: 100, suppressed: false }]);

    const history = await t.app.inject({ url: `/v1/transactions?walletId=${hot.walletId}`, headers: bearer(token) });
    expect(history.json()).toMatchObject({
      total: 1,
      transactions: [{ signature: drain.signature, amount: 40_000, token: "SOL", mint: null, from: hot.address, to: attacker, status: "success" }],
    });
  });
});

describe("40,000 SOL sent into a token account the hot wallet nominally owns, beside dust naming it", () => {
  it("is stored as sent to that account, fires large_transfer on the whole amount, and counts as SOL sent (large_outflow)", async () => {
    // The attacker made the account with the hot wallet's key, owned by the hot wallet and closable
    // by himself: he closes it later, in a transaction the hot wallet is not in.
    const [attacker, attackerAccount, hotAccount, junk] = [randomAddress(), randomAddress(), randomAddress(), randomAddress()];
    const hot = await track(t, token);
    const large = await createAlert(t, token, { walletId: hot.walletId, condition: "large_transfer", threshold: 1_000, token: "SOL" });
    const drain = transfer(hot.address, {
      nativeTransfers: [{ fromUserAccount: hot.address, toUserAccount: hotAccount, amount: 40_000 * LAMPORTS + 2_039_280 }],
      tokenTransfers: [{ fromUserAccount: attacker, toUserAccount: hot.address, fromTokenAccount: attackerAccount, toTokenAccount: hotAccount, mint: junk, tokenAmount: 0.000001 }],
    });
    const res = await post([drain]);
    expect(res.json()).toEqual({ accepted: 1, duplicates: 0, skipped: 0, rejected: [] });
    await settled(t);

    expect(await eventsOf(t, large)).toMatchObject([{ dedupeKey: drain.signature, observed: 40_000.00203928, suppressed: false }]);
    const [fired] = await reasonsOf(large);
    expect(fired!.reason).toMatch(/^Sent 40,000\.00203928 SOL to /);
    expect(fired).toMatchObject({ direction: "sent", counterparty: { address: hotAccount } });
    const rows = await t.deps.sql`select leg, from_address, to_address, amount::text, token, mint from transactions where signature = ${drain.signature} order by leg`;
    // A TRANSFER's principal is its first token transfer: the dust is leg 0.
    expect(rows).toEqual([
      { leg: 0, from_address: attacker, to_address: hot.address, amount: "0.000001", token: junk, mint: junk },
      { leg: 1, from_address: hot.address, to_address: hotAccount, amount: "40000.00203928", token: "SOL", mint: null },
    ]);
    const wallet = await t.app.inject({ url: `/v1/wallets/${hot.walletId}`, headers: bearer(token) });
    expect(wallet.json()).toMatchObject({ riskFactors: expect.arrayContaining(["large_outflow"]) });
  });
});

describe("40,000 SOL through a token account given two users (its owner changed within the transaction)", () => {
  it("is counted once: sent by the hot wallet to the account, then by the account to the attacker", async () => {
    const [attacker, handedOver, elsewhere] = [randomAddress(), randomAddress(), randomAddress()];
    const hot = await track(t, token);
    const large = await createAlert(t, token, { walletId: hot.walletId, condition: "large_transfer", threshold: 1_000, token: "SOL" });
    const dust = (user: string) => ({ fromUserAccount: user, toUserAccount: user, fromTokenAccount: handedOver, toTokenAccount: elsewhere, mint: WRAPPED_SOL_MINT, tokenAmount: 0.000000001 });
    const drain = transfer(hot.address, {
      nativeTransfers: [
        { fromUserAccount: hot.address, toUserAccount: handedOver, amount: 40_000 * LAMPORTS },
        { fromUserAccount: handedOver, toUserAccount: attacker, amount: 40_000 * LAMPORTS },
      ],
      tokenTransfers: [dust(hot.address), dust(attacker)],
    });
    expect((await post([drain])).json()).toEqual({ accepted: 1, duplicates: 0, skipped: 0, rejected: [] });
    await settled(t);

    expect(await eventsOf(t, large)).toMatchObject([{ dedupeKey: drain.signature, observed: 40_000, suppressed: false }]);
    const [fired] = await reasonsOf(large);
    expect(fired!.reason).toMatch(/^Sent 40,000 SOL to /);
    const sol = await t.deps.sql`select from_address, to_address, amount::text from transactions where signature = ${drain.signature} and mint is null order by leg`;
    expect(sol).toEqual([
      { from_address: hot.address, to_address: handedOver, amount: "40000" },
      { from_address: handedOver, to_address: attacker, amount: "40000" },
    ]);
  });
});

describe("a native transfer whose receiving side Helius left empty", () => {
  it("refuses that item, naming the field, keeps it for replay, and stores the rest of the delivery", async () => {
    const hot = await track(t, token);
    const unnamed = transfer(hot.address, { nativeTransfers: [{ fromUserAccount: hot.address, toUserAccount: "", amount: 10_000 * LAMPORTS }] });
    const plain = transfer(hot.address, { nativeTransfers: [{ fromUserAccount: hot.address, toUserAccount: randomAddress(), amount: LAMPORTS }] });
    const res = await post([plain, unnamed]);
    expect(res.json()).toEqual({
      accepted: 1,
      duplicates: 0,
      skipped: 0,
      rejected: [{ index: 1, signature: unnamed.signature, errors: [{ path: "body.1.nativeTransfers.0.toUserAccount", message: expect.stringMatching(/^must be a Solana address: a native \(SOL\) transfer always has two sides/) }] }],
    });
    const kept = await t.deps.sql`select item from helius_rejected_items where signature = ${unnamed.signature}`;
    expect(kept).toEqual([{ item: unnamed }]);
    const stored = await t.deps.sql`select signature from transactions where signature in ${t.deps.sql([plain.signature, unnamed.signature])}`;
    expect(stored).toEqual([{ signature: plain.signature }]);
  });
});
