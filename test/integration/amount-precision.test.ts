// Amounts are kept as sent. Stored with 9 (USD values: 6) decimals, a transfer of
// 9.9999999996 read back as 10, fired a large_transfer alert at 10 with observed 10, and a
// dust amount read back as 0: a compliance desk alerted on, and reporting, an amount never sent.
import { afterAll, beforeAll, expect, it } from "vitest";
import type { RunningWorkers } from "../../src/queue/run-workers.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { randomAddress } from "../helpers/chain.ts";
import { createAlert, eventsOf, settled, startWorkers, track } from "../helpers/pipeline.ts";
import { bearer, ingestAccounts, ingestTransactions, makeTransaction } from "../helpers/seed.ts";

let t: TestApp;
let workers: RunningWorkers;
let alice: string;
beforeAll(async () => {
  t = await startTestApp("amount-precision");
  workers = startWorkers(t);
  alice = await t.token("alice");
});
afterAll(async () => {
  await workers.close();
  await t.close();
});

it("keeps transaction amounts and fees to the last digit sent, and judges large_transfer on them", async () => {
  const wallet = await track(t, alice);
  const alertId = await createAlert(t, alice, { walletId: wallet.walletId, condition: "large_transfer", threshold: 10 });
  const now = Math.floor(Date.now() / 1000);
  const below = makeTransaction({ from: wallet.address, amount: 9.9999999996, fee: 0.0000050001, blockTime: now - 60 });
  const dust = makeTransaction({ from: wallet.address, amount: 0.0000000004, blockTime: now - 120 });
  expect(await ingestTransactions(t, alice, [below, dust])).toEqual({ accepted: 2, duplicates: 0 });
  await settled(t);

  const history = (await t.app.inject({ url: `/v1/transactions?walletId=${wallet.walletId}`, headers: bearer(alice) })).json();
  expect(history.transactions.map((x: { amount: number; fee: number }) => [x.amount, x.fee])).toEqual([
    [9.9999999996, 0.0000050001],
    [0.0000000004, dust.fee],
  ]);
  expect(await eventsOf(t, alertId)).toEqual([]);
});

it("reports the observed amount of a large transfer as sent", async () => {
  const wallet = await track(t, alice);
  const alertId = await createAlert(t, alice, { walletId: wallet.walletId, condition: "large_transfer", threshold: 10 });
  await ingestTransactions(t, alice, [makeTransaction({ from: wallet.address, amount: 10.0000000004, blockTime: Math.floor(Date.now() / 1000) - 30 })]);
  await settled(t);
  expect((await eventsOf(t, alertId)).map((event) => event.observed)).toEqual([10.0000000004]);
});

it("keeps token balances, USD values and NFT floor prices as sent", async () => {
  const wallet = await track(t, alice);
  await ingestAccounts(t, alice, [
    {
      address: wallet.address,
      balance: 1.0000000001,
      tokenAccounts: [{ mint: randomAddress(), symbol: "X", balance: 0.00000000012, usdValue: 0.0000004 }],
      nfts: [{ mint: randomAddress(), name: "n", collection: "c", floorPrice: 1.2345678 }],
    },
  ]);
  const detail = (await t.app.inject({ url: `/v1/wallets/${wallet.walletId}`, headers: bearer(alice) })).json();
  expect(detail.balance).toBe(1.0000000001);
  expect(detail.tokenAccounts[0]).toMatchObject({ balance: 0.00000000012, usdValue: 0.0000004 });
  expect(detail.nfts[0].floorPrice).toBe(1.2345678);
});
