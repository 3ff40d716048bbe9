// The service counts and scores tracked addresses only (src/pipeline/scoring.ts): an untracked
// counterparty gets no activity counters and no score, and a score stored for it (left from an
// earlier tracking) is not its risk as a counterparty. An address that becomes tracked is
// scored from the labels of its stored history and the counters seeded from it (the same
// score whether another caller tracks it or not), and counters left from an earlier tracking
// are rebuilt from that history; a label change rescores tracked addresses only.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RiskFactor } from "../../src/domain/types.ts";
import { activityStateKey, counterpartyKey } from "../../src/pipeline/activity.ts";
import type { RunningWorkers } from "../../src/queue/run-workers.ts";
import { countersOf } from "../helpers/activity-history.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { randomAddress } from "../helpers/chain.ts";
import { createAlert, eventsOf, putLabels, settled, startWorkers, track, tx } from "../helpers/pipeline.ts";
import { bearer, ingestAccounts, ingestTransactions } from "../helpers/seed.ts";

let t: TestApp;
let workers: RunningWorkers;
let alice: string;
let bob: string;
let carol: string;
const now = Math.floor(Date.now() / 1000);

beforeAll(async () => {
  t = await startTestApp("tracked-scoring");
  workers = startWorkers(t);
  [alice, bob, carol] = await Promise.all([t.token("alice"), t.token("bob"), t.token("carol")]);
});
afterAll(async () => {
  await workers.close();
  await t.close();
});

/** Whether the address has its activity state in Redis (it is counted). */
const counted = async (address: string) => (await t.deps.redis.exists(activityStateKey(t.config.queuePrefix, address))) === 1;

async function historyOf(address: string) {
  return t.deps.sql<{ score: number; cause: string; evaluated: boolean }[]>`
    select score, cause, evaluated_at is not null as evaluated from risk_score_history where address = ${address} order by id`;
}

async function riskOf(token: string, walletId: string) {
  const res = await t.app.inject({ url: `/v1/wallets/${walletId}`, headers: bearer(token) });
  const body = res.json() as { riskScore: number; riskFactors: RiskFactor[] };
  return { riskScore: body.riskScore, riskFactors: body.riskFactors };
}

/** Ten transactions sent by `address` to one counterparty, three of them failed: failed_tx_ratio (weight 0.1) once counted. */
function failingSends(address: string, from: number) {
  const to = randomAddress();
  return Array.from({ length: 10 }, (_, i) => tx({ from: address, to, status: i < 3 ? "failed" : "success", blockTime: from + i }));
}

describe("who is scored", () => {
  it("counts and scores the tracked side, and leaves an untracked counterparty unscored", async () => {
    const wallet = await track(t, alice);
    const stranger = randomAddress();
    const mixer = randomAddress();
    expect((await putLabels(t, alice, [{ address: mixer, category: "mixer", score: 90 }])).statusCode).toBe(200);
    // The stranger deals with a mixer in the same batch: scored, it would get mixer_interaction.
    await ingestTransactions(t, alice, [
      tx({ from: stranger, to: wallet.address, blockTime: now }),
      tx({ from: stranger, to: mixer, blockTime: now + 1 }),
      tx({ from: wallet.address, to: mixer, blockTime: now + 2 }),
    ]);
    await settled(t);

    expect(await riskOf(alice, wallet.walletId)).toEqual({ riskScore: 60, riskFactors: ["mixer_interaction"] });
    expect(await counted(wallet.address)).toBe(true);
    expect(await counted(stranger)).toBe(false);
    expect(await historyOf(stranger)).toEqual([]);
    const [state] = await t.deps.sql`select 1 from address_state where address = ${stranger}`;
    expect(state).toBeUndefined();
  });

  it("takes a counterparty's own score as its risk only while some caller tracks it", async () => {
    const wallet = await track(t, alice);
    const alert = await createAlert(t, alice, { walletId: wallet.walletId, condition: "suspicious_counterparty", threshold: 50 });
    // Bob's wallet scores 60 (mixer_interaction); the other one holds a score of 90 stored while
    // it was tracked before, which says nothing of what it did since.
    const bobs = await track(t, bob);
    const mixer = randomAddress();
    expect((await putLabels(t, bob, [{ address: mixer, category: "mixer", score: 90 }])).statusCode).toBe(200);
    await ingestTransactions(t, bob, [tx({ from: bobs.address, to: mixer, blockTime: now })]);
    await settled(t);
    const formerlyTracked = randomAddress();
    await t.deps.sql`
      insert into address_state (address, risk_score, risk_factors) values (${formerlyTracked}, 90, '{sanctioned_counterparty}')`;

    const toBob = tx({ from: wallet.address, to: bobs.address, blockTime: now + 10 });
    await ingestTransactions(t, alice, [toBob, tx({ from: wallet.address, to: formerlyTracked, blockTime: now + 11 })]);
    await settled(t);
    expect((await eventsOf(t, alert)).map((e) => [e.dedupeKey, e.observed])).toEqual([[toBob.signature, 60]]);
  });
});

describe("failed transactions", () => {
  it("counts a failed transaction with no transfer (fee payer to itself, as Helius's are stored) towards failed_tx_ratio", async () => {
    const wallet = await track(t, alice);
    // A failed Helius item moves nothing: it is stored as 0 SOL from the fee payer to itself.
    const failed = Array.from({ length: 3 }, (_, i) =>
      tx({ from: wallet.address, to: wallet.address, amount: 0, status: "failed", blockTime: now + i }),
    );
    const sent = Array.from({ length: 7 }, (_, i) => tx({ from: wallet.address, to: randomAddress(), blockTime: now + 3 + i }));
    await ingestTransactions(t, alice, [...failed, ...sent]);
    await settled(t);
    expect(await riskOf(alice, wallet.walletId)).toEqual({ riskScore: 10, riskFactors: ["failed_tx_ratio"] });
  });
});

describe("large_outflow", () => {
  it("counts SOL transferred away, not SOL staked or swapped", async () => {
    const [staker, swapper, sender] = await Promise.all([track(t, alice), track(t, alice), track(t, alice)]);
    // 150 SOL out of a wallet with no snapshot (balance 0) is past max(100 SOL, 50 % of the balance).
    await ingestTransactions(t, alice, [
      tx({ type: "stake", from: staker.address, to: randomAddress(), amount: 150, blockTime: now }),
      tx({ type: "swap", from: swapper.address, to: randomAddress(), amount: 150, blockTime: now }),
      tx({ type: "transfer", from: sender.address, to: randomAddress(), amount: 150, blockTime: now }),
    ]);
    await settled(t);
    expect(await riskOf(alice, staker.walletId)).toEqual({ riskScore: 0, riskFactors: [] });
    expect(await riskOf(alice, swapper.walletId)).toEqual({ riskScore: 0, riskFactors: [] });
    expect(await riskOf(alice, sender.walletId)).toEqual({ riskScore: 20, riskFactors: ["large_outflow"] });
  });

  it("judges a day's sends against half of the latest snapshot's balance, taken before the sends", async () => {
    const [drained, halfLess] = await Promise.all([track(t, alice), track(t, alice)]);
    const snapshot = (address: string) => ({ address, balance: 50_000, tokenAccounts: [], nfts: [] });
    await ingestAccounts(t, alice, [snapshot(drained.address), snapshot(halfLess.address)]);
    // Spread over 12 hours, to fresh addresses: no other factor. Until 2026-11-28 the cut-off was
    // half of balance + outflow, so 49,950 of a 50,000 SOL snapshot (99.9 %) raised nothing.
    const sends = (from: string, count: number, amount: number) =>
      Array.from({ length: count }, (_, i) =>
        tx({ from, to: randomAddress(), amount, blockTime: now - 12 * 3_600 + i * 864 }),
      );
    await ingestTransactions(t, alice, [...sends(drained.address, 50, 999), ...sends(halfLess.address, 25, 999.8)]);
    await settled(t);
    expect(await riskOf(alice, drained.walletId)).toEqual({ riskScore: 20, riskFactors: ["large_outflow"] });
    // 24,995 SOL, 49.99 % of the snapshot: just short of half.
    expect(await riskOf(alice, halfLess.walletId)).toEqual({ riskScore: 0, riskFactors: [] });
  });
});

describe("when an address becomes tracked", () => {
  it("scores it from the labels of its stored history, at once", async () => {
    const address = randomAddress();
    const sanctioned = randomAddress();
    expect((await putLabels(t, alice, [{ address: sanctioned, category: "sanctioned", score: 100 }])).statusCode).toBe(200);
    await ingestTransactions(t, alice, [tx({ from: sanctioned, to: address, blockTime: now })]);
    await settled(t);
    expect(await historyOf(address)).toEqual([]);

    const wallet = await track(t, alice, address);
    expect(await riskOf(alice, wallet.walletId)).toEqual({ riskScore: 90, riskFactors: ["sanctioned_counterparty"] });
    // No alert can be owed the change (none existed for the address): it is recorded as evaluated.
    expect(await historyOf(address)).toEqual([{ score: 90, cause: "tracking", evaluated: true }]);
  });

  it("leaves the score as it is when another caller tracks the address already", async () => {
    const wallet = await track(t, alice);
    await ingestTransactions(t, alice, failingSends(wallet.address, now));
    await settled(t);
    expect(await riskOf(alice, wallet.walletId)).toEqual({ riskScore: 10, riskFactors: ["failed_tx_ratio"] });

    const bobs = await track(t, bob, wallet.address);
    expect(await riskOf(bob, bobs.walletId)).toEqual({ riskScore: 10, riskFactors: ["failed_tx_ratio"] });
    expect((await historyOf(wallet.address)).map((h) => h.cause)).toEqual([expect.stringMatching(/^batch:/)]);
  });

  it("shows its first caller the behavioural factors of its stored history, as a caller of an address tracked already sees them: the score tells nobody whether another caller tracks it", async () => {
    // The security review's case: X tracked by Alice, Y by nobody, the same 30 transfers
    // received by each within a minute (high_velocity: ≥ 20 in the hour, ≥ 10 × the floor baseline of 1).
    const x = await track(t, alice);
    const y = randomAddress();
    const wave = (to: string) => Array.from({ length: 30 }, (_, i) => tx({ from: randomAddress(), to, amount: 0.001, blockTime: now + 100 + i }));
    await ingestTransactions(t, alice, [...wave(x.address), ...wave(y)]);
    await settled(t);

    const bobs = await track(t, bob, x.address);
    const carols = await track(t, carol, y);
    expect(await riskOf(bob, bobs.walletId)).toEqual({ riskScore: 15, riskFactors: ["high_velocity"] });
    expect(await riskOf(carol, carols.walletId)).toEqual({ riskScore: 15, riskFactors: ["high_velocity"] });
    // Recorded as any first tracking's change: no alert existed on the address.
    expect(await historyOf(y)).toEqual([{ score: 15, cause: "tracking", evaluated: true }]);
  });

  it("starts afresh when it is tracked again: counters from the earlier tracking are rebuilt from the stored history, and its behavioural factors are theirs", async () => {
    const wallet = await track(t, alice);
    await ingestTransactions(t, alice, failingSends(wallet.address, now));
    await settled(t);
    expect(await counted(wallet.address)).toBe(true);
    const untracked = await t.app.inject({ method: "DELETE", url: `/v1/wallets/${wallet.walletId}`, headers: bearer(alice) });
    expect(untracked.statusCode).toBe(204);
    // Untracked meanwhile: a payment the counters of the earlier tracking never saw.
    const payee = randomAddress();
    await ingestTransactions(t, alice, [tx({ from: wallet.address, to: payee, blockTime: now + 20 })]);
    await settled(t);
    expect((await countersOf(t, wallet.address)).counterparties).not.toContain(counterpartyKey(payee));

    const again = await track(t, alice, wallet.address);
    expect(await riskOf(alice, again.walletId)).toEqual({ riskScore: 0, riskFactors: [] });
    expect((await countersOf(t, wallet.address)).counterparties).toContain(counterpartyKey(payee));
  });
});

describe("a label change", () => {
  it("rescores the tracked addresses that dealt with the relabelled one, and no others", async () => {
    const wallet = await track(t, alice);
    const stranger = randomAddress();
    const relabelled = randomAddress();
    await ingestTransactions(t, alice, [
      tx({ from: wallet.address, to: relabelled, blockTime: now }),
      tx({ from: stranger, to: relabelled, blockTime: now + 1 }),
    ]);
    await settled(t);

    expect((await putLabels(t, alice, [{ address: relabelled, category: "mixer", score: 90 }])).statusCode).toBe(200);
    await settled(t);
    expect(await riskOf(alice, wallet.walletId)).toEqual({ riskScore: 60, riskFactors: ["mixer_interaction"] });
    expect(await historyOf(stranger)).toEqual([]);
  });
});
