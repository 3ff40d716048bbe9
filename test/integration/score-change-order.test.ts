// An address's score changes are evaluated against risk_score_increase alerts in the order they
// happened, whichever job runs first: each firing moves the alert's baseline, so a later change
// evaluated first would fire with the whole rise and leave the earlier one below the new
// baseline (one event where there are two). Here the `risk` queue has no worker, as when its
// jobs are late or were lost with Redis, until the test runs the jobs itself.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { evaluateScoreChanges } from "../../src/pipeline/evaluate-risk.ts";
import type { RunningWorkers } from "../../src/queue/run-workers.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { randomAddress } from "../helpers/chain.ts";
import { batchesEvaluated, createAlert, eventsOf, putLabels, settled, startWorkers, track, tx } from "../helpers/pipeline.ts";
import { ingestTransactions } from "../helpers/seed.ts";

let t: TestApp;
let batchWorkers: RunningWorkers;
let token: string;
const now = Math.floor(Date.now() / 1000);

beforeAll(async () => {
  t = await startTestApp("score-change-order");
  batchWorkers = startWorkers(t, ["transactions"]);
  token = await t.token("alice");
});
afterAll(async () => {
  await batchWorkers.close();
  await t.close();
});


async function historyOf(address: string) {
  return t.deps.sql<{ id: number; previous: number; score: number; cause: string; evaluated: boolean }[]>`
    select id::float8 as id, previous_score as previous, score, cause, evaluated_at is not null as evaluated
    from risk_score_history where address = ${address} order by id`;
}

/** A tracked wallet with a risk_score_increase alert (threshold 10) that has dealt with `counterparties`. */
async function walletThatDealtWith(counterparties: string[]) {
  const wallet = await track(t, token);
  const alertId = await createAlert(t, token, { walletId: wallet.walletId, condition: "risk_score_increase", threshold: 10 });
  await ingestTransactions(t, token, counterparties.map((to, i) => tx({ from: wallet.address, to, amount: 1, blockTime: now + i })));
  await batchesEvaluated(t);
  return { ...wallet, alertId };
}

describe("the order score changes are evaluated in", () => {
  it("evaluates a label change still owed its evaluation before a batch's later change of the same wallet", async () => {
    const [mixer, sanctioned] = [randomAddress(), randomAddress()];
    expect((await putLabels(t, token, [{ address: sanctioned, category: "sanctioned", score: 100 }])).statusCode).toBe(200);
    const wallet = await walletThatDealtWith([mixer]);

    // The label change rescores the wallet 0 → 60; its risk job waits (no worker serves `risk`).
    const mixing = await putLabels(t, token, [{ address: mixer, category: "mixer", score: 90 }]);
    expect(mixing.statusCode).toBe(200);
    // Then a batch takes it 60 → 96 (a sanctioned counterparty).
    await ingestTransactions(t, token, [tx({ from: wallet.address, to: sanctioned, amount: 1, blockTime: now + 10 })]);
    await batchesEvaluated(t);

    const [labelChange, batchChange] = await historyOf(wallet.address);
    expect(labelChange).toMatchObject({ previous: 0, score: 60, cause: `labels:${mixing.json<{ loadId: string }>().loadId}`, evaluated: true });
    expect(batchChange).toMatchObject({ previous: 60, score: 96, evaluated: true });
    // Two rises of at least 10 over the baseline, each fired: 60 over 0, then 36 over 60.
    const fired = [
      { dedupeKey: `score:${labelChange!.id}`, observed: 60, suppressed: false },
      { dedupeKey: `score:${batchChange!.id}`, observed: 36, suppressed: false },
    ];
    expect(await eventsOf(t, wallet.alertId)).toMatchObject(fired);

    // The late risk job, when a worker gets to it, finds its change evaluated: nothing more.
    const riskWorkers = startWorkers(t, ["risk"]);
    try {
      await settled(t);
    } finally {
      await riskWorkers.close();
    }
    expect(await eventsOf(t, wallet.alertId)).toMatchObject(fired);
  });

  it("evaluates an earlier label change first when a later one's job runs before its own", async () => {
    const [mixer, sanctioned] = [randomAddress(), randomAddress()];
    const wallet = await walletThatDealtWith([mixer, sanctioned]);
    await putLabels(t, token, [{ address: mixer, category: "mixer", score: 90 }]); // 0 → 60
    await putLabels(t, token, [{ address: sanctioned, category: "sanctioned", score: 100 }]); // 60 → 96
    const [first, second] = await historyOf(wallet.address);
    expect([first, second]).toMatchObject([
      { previous: 0, score: 60, evaluated: false },
      { previous: 60, score: 96, evaluated: false },
    ]);

    // The second change's job runs first: it takes the first change along, in order.
    expect(await evaluateScoreChanges(t.deps, [second!.id])).toMatchObject({ evaluated: 2, events: 2 });
    expect(await evaluateScoreChanges(t.deps, [first!.id])).toEqual({ evaluated: 0, events: 0, notifications: 0 });
    expect(await eventsOf(t, wallet.alertId)).toMatchObject([
      { dedupeKey: `score:${first!.id}`, observed: 60 },
      { dedupeKey: `score:${second!.id}`, observed: 36 },
    ]);
    expect((await historyOf(wallet.address)).map((change) => change.evaluated)).toEqual([true, true]);
  });
});
