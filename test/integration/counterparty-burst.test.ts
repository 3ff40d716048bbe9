// new_counterparty_burst counts only the fresh addresses a wallet sent to (failed sends too);
// the addresses it received from are remembered as dealt with, never counted (README "Risk
// score", src/domain/risk/dealings.ts). Before, ten 100-lamport address-poisoning transfers from
// fresh addresses gave a wallet riskScore 15 and fired its risk_score_increase alerts.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Transaction } from "../../src/domain/types.ts";
import type { RunningWorkers } from "../../src/queue/run-workers.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { randomAddress } from "../helpers/chain.ts";
import { eventsOf, startWorkers, tx } from "../helpers/pipeline.ts";
import { riskWatch, type RiskWatch } from "../helpers/risk-watch.ts";

let t: TestApp;
let workers: RunningWorkers;
let watch: RiskWatch;
let token: string;
const now = Math.floor(Date.now() / 1000);
/** 100 lamports. */
const DUST = 0.0000001;

beforeAll(async () => {
  t = await startTestApp("counterparty-burst");
  workers = startWorkers(t);
  token = await t.token("alice");
  watch = riskWatch(t, token);
});
afterAll(async () => {
  await workers.close();
  await t.close();
});

const dustFrom = (from: string, to: string, blockTime: number) => tx({ from, to, amount: DUST, token: "SOL", blockTime });
const payment = (from: string, to: string, blockTime: number, status: Transaction["status"] = "success") =>
  tx({ from, to, amount: 2, token: "SOL", blockTime, status });
const fresh = (count: number) => Array.from({ length: count }, randomAddress);
/** A small send (0.01 SOL): no outflow factor, whatever the count. */
const send = (from: string, to: string, blockTime: number) => tx({ from, to, amount: 0.01, token: "SOL", blockTime });

describe("new_counterparty_burst", () => {
  it("leaves the score 0 and fires nothing for ten dust transfers from fresh addresses within ten minutes", async () => {
    const wallet = await watch.watchedWallet();
    // A poisoning wave arrives as it happens, one transfer a minute, each in a batch of its own.
    for (const [k, from] of fresh(10).entries()) await watch.ingest([dustFrom(from, wallet.address, now - 600 + k * 60)]);

    expect(await watch.riskOf(wallet.walletId)).toEqual({ riskScore: 0, riskFactors: [] });
    expect(await eventsOf(t, wallet.alertId)).toEqual([]);
  });

  it("fires on ten sends to fresh addresses within an hour, the dust received in that hour adding nothing", async () => {
    const wallet = await watch.watchedWallet();
    const payees = fresh(10);
    await watch.ingest([
      ...fresh(5).map((from, k) => dustFrom(from, wallet.address, now - 1800 + k)),
      ...payees.slice(0, 9).map((to, k) => payment(wallet.address, to, now - 1200 + k * 60)),
    ]);
    // Nine sent to, five received from: counted together they made fourteen.
    expect(await watch.riskOf(wallet.walletId)).toEqual({ riskScore: 0, riskFactors: [] });

    await watch.ingest([payment(wallet.address, payees[9]!, now - 60)]);
    expect(await watch.riskOf(wallet.walletId)).toEqual({ riskScore: 15, riskFactors: ["new_counterparty_burst"] });
    expect(await eventsOf(t, wallet.alertId)).toMatchObject([{ condition: "risk_score_increase", observed: 15, suppressed: false }]);
  });

  it("counts a failed send to a fresh address, never a failed transfer received", async () => {
    const wallet = await watch.watchedWallet();
    const payees = fresh(10);
    await watch.ingest([
      ...fresh(5).map((from, k) => tx({ from, to: wallet.address, blockTime: now - 1800 + k, status: "failed" })),
      ...payees.slice(0, 9).map((to, k) => payment(wallet.address, to, now - 1200 + k * 60, "failed")),
    ]);
    // 9 of its 14 transactions failed as its own sends: failed_tx_ratio (10), no burst yet.
    expect(await watch.riskOf(wallet.walletId)).toEqual({ riskScore: 10, riskFactors: ["failed_tx_ratio"] });

    await watch.ingest([payment(wallet.address, payees[9]!, now - 60, "failed")]);
    // 1 − 0.9 × 0.85 = 0.235, rounded up from the half.
    expect(await watch.riskOf(wallet.walletId)).toEqual({ riskScore: 24, riskFactors: ["failed_tx_ratio", "new_counterparty_burst"] });
  });

  it("does not count an address that paid the wallet as new when the wallet pays it back", async () => {
    const wallet = await watch.watchedWallet();
    const payers = fresh(10);
    // An hour apart, so that no trailing hour holds twenty transactions (high_velocity).
    await watch.ingest(payers.map((from, k) => dustFrom(from, wallet.address, now - 3 * 3600 + k)));
    expect(await watch.riskOf(wallet.walletId)).toEqual({ riskScore: 0, riskFactors: [] });
    // Remembered: paying them back is not dealing with ten new addresses.
    await watch.ingest(payers.map((to, k) => payment(wallet.address, to, now - 2 * 3600 + k)));
    expect(await watch.riskOf(wallet.walletId)).toEqual({ riskScore: 0, riskFactors: [] });

    // Ten addresses it had never dealt with, within an hour: a burst.
    await watch.ingest(fresh(10).map((to, k) => payment(wallet.address, to, now - 600 + k)));
    expect(await watch.riskOf(wallet.walletId)).toEqual({ riskScore: 15, riskFactors: ["new_counterparty_burst"] });
    expect(await eventsOf(t, wallet.alertId)).toMatchObject([{ observed: 15 }]);
  });

  it("goes by chain order within a batch: received from, then sent to, is not new; sent to, then received from, is", async () => {
    const wallet = await watch.watchedWallet();
    const payers = fresh(8);
    const paidFirst = fresh(5);
    const burst = async () => (await watch.riskOf(wallet.walletId)).riskFactors.includes("new_counterparty_burst");
    // Sent in reverse: the batch is counted in chain order (block time), whatever the order it came in.
    const batch = [
      ...payers.map((from, k) => dustFrom(from, wallet.address, now - 1800 + k)),
      ...payers.map((to, k) => payment(wallet.address, to, now - 1700 + k)),
      ...paidFirst.map((to, k) => payment(wallet.address, to, now - 1600 + k)),
      ...paidFirst.map((from, k) => dustFrom(from, wallet.address, now - 1500 + k)),
    ].reverse();
    await watch.ingest(batch);
    // Five new (paid, then paying back); the eight that paid first are not. (26 transactions
    // within the hour give high_velocity: only the burst is under test here.)
    expect(await burst()).toBe(false);

    await watch.ingest(fresh(5).map((to, k) => payment(wallet.address, to, now - 600 + k)));
    expect(await burst()).toBe(true);
  });

  it("finds no burst in twelve sends to fresh addresses an hour apart, in one request as one by one", async () => {
    // A backfill of a wallet's history: in one request, all twelve counted at its newest
    // transaction's minute made a burst (score 15, a risk_score_increase page); one by one, none.
    const [together, oneByOne] = [await watch.watchedWallet(), await watch.watchedWallet()];
    const history = (wallet: { address: string }) => fresh(12).map((to, k) => send(wallet.address, to, now - 600 - (11 - k) * 3600));
    await watch.ingest(history(together));
    for (const one of history(oneByOne)) await watch.ingest([one]);

    for (const wallet of [together, oneByOne]) {
      expect(await watch.riskOf(wallet.walletId)).toEqual({ riskScore: 0, riskFactors: [] });
      expect(await eventsOf(t, wallet.alertId)).toEqual([]);
    }
  });

  it("finds no burst in a week's backfill of two sends an hour in one request, its last hour still counting toward one", async () => {
    const wallet = await watch.watchedWallet();
    // 336 fresh payees, the newest a minute ago: the last hour holds two of them.
    await watch.ingest(fresh(7 * 24 * 2).map((to, k) => send(wallet.address, to, now - 60 - k * 1800)));
    expect(await watch.riskOf(wallet.walletId)).toEqual({ riskScore: 0, riskFactors: [] });
    expect(await eventsOf(t, wallet.alertId)).toEqual([]);

    // Eight more fresh payees within that hour: ten new in it.
    await watch.ingest(fresh(8).map((to, k) => send(wallet.address, to, now - 600 + k)));
    expect(await watch.riskOf(wallet.walletId)).toEqual({ riskScore: 15, riskFactors: ["new_counterparty_burst"] });
  });

  it("remembers a fortnightly payroll's payees after the other counters expired: paying them again is no burst", async () => {
    const wallet = await watch.watchedWallet();
    const payees = fresh(12);
    const payroll = (at: number) => payees.map((to, k) => payment(wallet.address, to, at + k));
    const key = (kind: string) => `${t.config.queuePrefix}:${kind}:${wallet.address}`;
    // The first payroll after the tracking: twelve addresses it had never dealt with.
    await watch.ingest(payroll(now - 15 * 86_400));
    expect((await watch.riskOf(wallet.walletId)).riskFactors).toEqual(["new_counterparty_burst"]);

    // Two weeks on: what Redis has done by then (every counter with less time to live is gone).
    for (const kind of ["activity", "activity-h", "activity-cp"]) {
      if ((await t.deps.redis.ttl(key(kind))) < 14 * 86_400) await t.deps.redis.del(key(kind));
    }
    expect(await t.deps.redis.exists(key("activity"))).toBe(0);
    await watch.ingest(payroll(now - 86_400));
    expect(await watch.riskOf(wallet.walletId)).toEqual({ riskScore: 0, riskFactors: [] });
  });
});
