// A Helius item moving funds to several accounts, end to end: Helius webhook → Postgres (one
// row per leg) → real BullMQ worker → alert events. Each tracked wallet on any leg is judged
// on its own leg; an alert still fires at most once per chain transaction, and the activity
// counters count a transaction once per wallet however many of its legs the wallet is on.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { NotificationPayload } from "../../src/domain/types.ts";
import type { HeliusTransaction } from "../../src/ingest/helius.ts";
import type { RunningWorkers } from "../../src/queue/run-workers.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { randomAddress, randomSignature } from "../helpers/chain.ts";
import { createAlert, eventsOf, putLabels, settled, startWorkers, track } from "../helpers/pipeline.ts";
import { bearer, ingestTransactions, makeTransaction } from "../helpers/seed.ts";

const SECRET = "helius-legs-test-auth-header-0123";
const LAMPORTS = 1_000_000_000;
const now = Math.floor(Date.now() / 1000);

let t: TestApp;
let workers: RunningWorkers;
let token: string;

beforeAll(async () => {
  t = await startTestApp("helius-legs", { HELIUS_AUTH_HEADER: SECRET });
  workers = startWorkers(t);
  token = await t.token("payout-desk");
});
afterAll(async () => {
  await workers.close();
  await t.close();
});

/** A TRANSFER item paying SOL from `payer` to each receiver, in the order given. */
function payout(payer: string, legs: Array<[to: string, sol: number]>, timestamp = now, signature = randomSignature()): HeliusTransaction {
  return {
    signature,
    slot: 300_000_000 + timestamp,
    timestamp,
    fee: 5000,
    feePayer: payer,
    type: "TRANSFER",
    transactionError: null,
    nativeTransfers: legs.map(([to, sol]) => ({ fromUserAccount: payer, toUserAccount: to, amount: sol * LAMPORTS })),
    tokenTransfers: [],
  };
}

async function deliver(items: HeliusTransaction[]): Promise<void> {
  const res = await t.app.inject({ method: "POST", url: "/v1/ingest/helius", headers: { authorization: SECRET }, payload: items });
  expect(res.statusCode).toBe(202);
  // Every item stored (none refused: the shape of the answer is helius-ingest's to check).
  expect(res.json()).toMatchObject({ accepted: items.length, duplicates: 0, skipped: 0 });
  await settled(t);
}

const notificationsOf = (alertId: string) => t.deps.sql<{ payload: NotificationPayload }[]>`
  select n.payload from notifications n join alert_events e on e.id = n.event_id where e.alert_id = ${alertId}`;

describe("a Helius item that moves nothing of value, or a compressed NFT", () => {
  const history = async (walletId: string) =>
    (await t.app.inject({ url: `/v1/transactions?walletId=${walletId}`, headers: bearer(token) })).json() as {
      transactions: Array<{ signature: string; type: string; amount: number; token: string; from: string; to: string }>;
      total: number;
    };

  it("keeps a 0 SOL transfer from a scam address to a tracked wallet (address poisoning) in its history and fires suspicious_counterparty", async () => {
    const scam = randomAddress();
    expect((await putLabels(t, token, [{ address: scam, category: "scam", score: 80 }])).statusCode).toBe(200);
    const w = await track(t, token);
    const alertId = await createAlert(t, token, { walletId: w.walletId, condition: "suspicious_counterparty", threshold: 75 });
    const poison = payout(scam, [[w.address, 0]]);
    await deliver([poison]);

    expect(await history(w.walletId)).toMatchObject({
      total: 1,
      transactions: [{ signature: poison.signature, type: "transfer", amount: 0, token: "SOL", from: scam, to: w.address }],
    });
    expect(await eventsOf(t, alertId)).toMatchObject([{ dedupeKey: poison.signature, observed: 80, suppressed: false }]);
  });

  it("shows a tracked wallet's 0 SOL transfer to a sanctioned address with that address as `to`, and scores sanctioned_counterparty", async () => {
    const sanctioned = randomAddress();
    expect((await putLabels(t, token, [{ address: sanctioned, category: "sanctioned", score: 95 }])).statusCode).toBe(200);
    const w = await track(t, token);
    const alertId = await createAlert(t, token, { walletId: w.walletId, condition: "suspicious_counterparty", threshold: 75 });
    const probe = payout(w.address, [[sanctioned, 0]]);
    await deliver([probe]);

    expect((await history(w.walletId)).transactions).toMatchObject([{ signature: probe.signature, amount: 0, from: w.address, to: sanctioned }]);
    const detail = await t.app.inject({ url: `/v1/wallets/${w.walletId}`, headers: bearer(token) });
    expect(detail.json().riskFactors).toContain("sanctioned_counterparty");
    expect(await eventsOf(t, alertId)).toMatchObject([{ dedupeKey: probe.signature, observed: 95 }]);
  });

  it("stores a compressed NFT sent by a scam address from the old leaf owner to the new one, and fires suspicious_counterparty", async () => {
    const scam = randomAddress();
    expect((await putLabels(t, token, [{ address: scam, category: "scam", score: 85 }])).statusCode).toBe(200);
    const w = await track(t, token);
    const alertId = await createAlert(t, token, { walletId: w.walletId, condition: "suspicious_counterparty", threshold: 75 });
    const [treeId, assetId] = [randomAddress(), randomAddress()];
    // As Helius sends a cNFT transfer: no native or token transfer, the move only in events.compressed.
    const transferEvent = {
      type: "COMPRESSED_NFT_TRANSFER",
      treeId,
      assetId,
      leafIndex: 4_102,
      instructionIndex: 0,
      innerInstructionIndex: null,
      newLeafOwner: w.address,
      oldLeafOwner: scam,
      newLeafDelegate: null,
      oldLeafDelegate: null,
      treeDelegate: null,
      seq: 5_033,
    };
    const cnft: HeliusTransaction = { ...payout(scam, []), type: "COMPRESSED_NFT_TRANSFER", events: { compressed: [transferEvent] } };
    await deliver([cnft]);

    const rows = await t.deps.sql`
      select leg, type, amount::text, token, mint, from_address, to_address from transactions where signature = ${cnft.signature}`;
    expect(rows.map((row) => ({ ...row }))).toEqual([
      { leg: 0, type: "nft", amount: "1", token: assetId, mint: assetId, from_address: scam, to_address: w.address },
    ]);
    expect(await eventsOf(t, alertId)).toMatchObject([{ dedupeKey: cnft.signature, observed: 85 }]);
  });
});

describe("a Helius item with several legs", () => {
  it("fires the alerts of tracked wallets on legs other than the principal one, each judged on its own leg", async () => {
    const sanctioned = randomAddress();
    expect((await putLabels(t, token, [{ address: sanctioned, category: "sanctioned", score: 95 }])).statusCode).toBe(200);
    const [a, b] = [await track(t, token), await track(t, token)];
    const watchCounterparty = await createAlert(t, token, { walletId: a.walletId, condition: "suspicious_counterparty", threshold: 75 });
    const watchAmount = await createAlert(t, token, { walletId: b.walletId, condition: "large_transfer", threshold: 1, token: "SOL" });
    // The largest leg, the principal one, goes to an untracked account.
    const item = payout(sanctioned, [
      [randomAddress(), 40],
      [a.address, 2],
      [b.address, 1],
    ]);
    await deliver([item]);

    expect(await eventsOf(t, watchCounterparty)).toMatchObject([{ dedupeKey: item.signature, observed: 95, suppressed: false }]);
    expect(await eventsOf(t, watchAmount)).toMatchObject([{ dedupeKey: item.signature, observed: 1, suppressed: false }]);
    const [toA] = await notificationsOf(watchCounterparty);
    expect(toA!.payload.data.transaction).toEqual({
      signature: item.signature,
      type: "transfer",
      amount: 2,
      token: "SOL",
      // Native SOL has no mint: null, as GET /v1/transactions shows it, not left out.
      mint: null,
      from: sanctioned,
      to: a.address,
      blockTime: now,
      slot: item.slot,
      fee: 0.000005,
      status: "success",
    });
  });

  it("fires an alert once for a transaction two of whose legs to the wallet reach the threshold, on their total", async () => {
    const w = await track(t, token);
    const alertId = await createAlert(t, token, { walletId: w.walletId, condition: "large_transfer", threshold: 3 });
    const item = payout(randomAddress(), [
      [w.address, 5],
      [randomAddress(), 1],
      [w.address, 7],
    ]);
    await deliver([item]);
    // The wallet received 5 and 7 SOL in the one transaction.
    expect(await eventsOf(t, alertId)).toMatchObject([{ dedupeKey: item.signature, observed: 12 }]);
    expect(await notificationsOf(alertId)).toHaveLength(1);
  });

  it("counts a transaction once toward unusual_activity however many of its legs the wallet is on", async () => {
    const w = await track(t, token);
    const alertId = await createAlert(t, token, { walletId: w.walletId, condition: "unusual_activity", threshold: 5 });
    // Three legs to the wallet in each of four transactions: 4 transactions in the hour, under 5 × the floor of 1.
    const threeLegs = (k: number) =>
      payout(
        randomAddress(),
        [
          [w.address, 1],
          [w.address, 2],
          [w.address, 3],
        ],
        now + k * 60,
      );
    await deliver([0, 1, 2, 3].map(threeLegs));
    expect(await eventsOf(t, alertId)).toEqual([]);

    const fifth = threeLegs(4);
    await deliver([fifth]);
    expect(await eventsOf(t, alertId)).toMatchObject([{ dedupeKey: fifth.signature, observed: 5 }]);

    // The history lists every leg: 15 rows, the fifth transaction's first.
    const res = await t.app.inject({ url: `/v1/transactions?walletId=${w.walletId}&limit=3`, headers: bearer(token) });
    expect(res.json()).toMatchObject({ total: 15, hasMore: true });
    expect(res.json().transactions.map((row: { signature: string; amount: number }) => [row.signature, row.amount])).toEqual([
      [fifth.signature, 3],
      [fifth.signature, 1],
      [fifth.signature, 2],
    ]);
  });

  it("stores nothing and fires nothing more when Helius delivers the same item again", async () => {
    const w = await track(t, token);
    const alertId = await createAlert(t, token, { walletId: w.walletId, condition: "large_transfer", threshold: 1 });
    const item = payout(randomAddress(), [
      [randomAddress(), 9],
      [w.address, 4],
    ]);
    await deliver([item]);
    const again = await t.app.inject({ method: "POST", url: "/v1/ingest/helius", headers: { authorization: SECRET }, payload: [item] });
    expect(again.json()).toEqual({ accepted: 0, duplicates: 1, skipped: 0, rejected: [] });
    await settled(t);
    expect(await eventsOf(t, alertId)).toHaveLength(1);
    const [rows] = await t.deps.sql<{ n: number }[]>`select count(*)::int as n from transactions where signature = ${item.signature}`;
    expect(rows!.n).toBe(2);
  });

  it("stores nothing more when Helius delivers an item again with another transfer among its legs", async () => {
    const [a, x, b] = [randomAddress(), randomAddress(), randomAddress()];
    const first = payout(randomAddress(), [
      [a, 9],
      [b, 4],
    ]);
    await deliver([first]);
    // Legs are numbered by position: the new transfer takes leg 1, and b's leg moves to 2.
    const again = payout(
      first.feePayer,
      [
        [a, 9],
        [x, 6],
        [b, 4],
      ],
      now,
      first.signature,
    );
    const res = await t.app.inject({ method: "POST", url: "/v1/ingest/helius", headers: { authorization: SECRET }, payload: [again] });
    expect(res.json()).toEqual({ accepted: 0, duplicates: 1, skipped: 0, rejected: [] });
    await settled(t);
    const rows = await t.deps.sql<{ leg: number; to: string; amount: number }[]>`
      select leg, to_address as "to", amount::float8 as amount from transactions where signature = ${first.signature} order by leg`;
    expect(rows.map((row) => ({ ...row }))).toEqual([
      { leg: 0, to: a, amount: 9 },
      { leg: 1, to: b, amount: 4 },
    ]);
  });

  it("counts a transaction that native ingest stored first once, when Helius then delivers it with more legs", async () => {
    const w = await track(t, token);
    const alertId = await createAlert(t, token, { walletId: w.walletId, condition: "unusual_activity", threshold: 2 });
    const payer = randomAddress();
    const signature = randomSignature();
    const fromPoller = makeTransaction({ signature, from: payer, to: w.address, amount: 5, blockTime: now, slot: 300_000_000 + now });
    expect(await ingestTransactions(t, token, [fromPoller])).toEqual({ accepted: 1, duplicates: 0 });
    await settled(t);
    const item = payout(
      payer,
      [
        [w.address, 5],
        [w.address, 2],
      ],
      now,
      signature,
    );
    const res = await t.app.inject({ method: "POST", url: "/v1/ingest/helius", headers: { authorization: SECRET }, payload: [item] });
    expect(res.json()).toEqual({ accepted: 0, duplicates: 1, skipped: 0, rejected: [] });
    await settled(t);
    // One chain transaction in the hour: under 2 × the floor of 1.
    expect(await eventsOf(t, alertId)).toEqual([]);
    const history = await t.app.inject({ url: `/v1/transactions?walletId=${w.walletId}`, headers: bearer(token) });
    expect(history.json()).toMatchObject({ total: 1 });
  });

  it("counts a tracked wallet that pays thousands of addresses in one delivery: every counterparty is new activity", async () => {
    const w = await track(t, token);
    // Nine airdrop transactions of 1,000 legs each: 9,000 counterparties of the wallet in one batch.
    const airdrop = (k: number) =>
      payout(
        w.address,
        Array.from({ length: 1000 }, (): [string, number] => [randomAddress(), 0.001]),
        now + k,
      );
    // More members than Redis's Lua can unpack into one SADD: the script failed part-way with the
    // batch's "counted" marker already set, so the evaluation that took the batch later skipped
    // its counts altogether.
    await deliver([0, 1, 2, 3, 4, 5, 6, 7, 8].map(airdrop));
    const res = await t.app.inject({ url: `/v1/wallets/${w.walletId}`, headers: bearer(token) });
    expect(res.json().riskFactors).toContain("new_counterparty_burst");
  }, 60_000);
});
