// A risk_score_increase alert judges only the score changes made after it was created or last
// resumed: its baseline, the score then, takes the earlier ones in already. A change made before
// can still be owed its evaluation when the alert comes (the `risk` queue held up by a backlog,
// an outage, a change made while the alert was paused): judged against the new alert, a label
// loaded by mistake and taken back (0 → 90 → 0) paged "rose 90 points, from 0 to 90" on a
// wallet whose score was 0 throughout the alert's life. Here the `risk` queue has no worker
// until the test starts one, as when its jobs wait behind a backlog.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningWorkers } from "../../src/queue/run-workers.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { randomAddress } from "../helpers/chain.ts";
import { batchesEvaluated, createAlert, eventsOf, putLabels, settled, startWorkers, track, tx } from "../helpers/pipeline.ts";
import { bearer, ingestTransactions } from "../helpers/seed.ts";

let t: TestApp;
let batchWorkers: RunningWorkers;
let token: string;
let clock = Math.floor(Date.now() / 1000);

beforeAll(async () => {
  t = await startTestApp("score-changes-before-alert");
  batchWorkers = startWorkers(t, ["transactions"]);
  token = await t.token("analyst");
});
afterAll(async () => {
  await batchWorkers.close();
  await t.close();
});


/** Runs the `risk` jobs waiting so far (and any the test's steps enqueue) until nothing is owed. */
async function riskJobsRun(): Promise<void> {
  const riskWorkers = startWorkers(t, ["risk"]);
  try {
    await settled(t);
  } finally {
    await riskWorkers.close();
  }
}

const historyOf = (address: string) =>
  t.deps.sql<{ id: number; previous: number; score: number; evaluated: boolean }[]>`
    select id::float8 as id, previous_score as previous, score, evaluated_at is not null as evaluated
    from risk_score_history where address = ${address} order by id`;

const removeLabel = (address: string) =>
  t.app.inject({ method: "DELETE", url: "/v1/risk/labels", headers: bearer(token), payload: { addresses: [address] } });

const patchAlert = (alertId: string, payload: Record<string, unknown>) =>
  t.app.inject({ method: "PATCH", url: `/v1/risk/alerts/${alertId}`, headers: bearer(token), payload });

const riskScoreOf = async (walletId: string): Promise<number> =>
  (await t.app.inject({ url: `/v1/wallets/${walletId}`, headers: bearer(token) })).json().riskScore;

/** A tracked wallet that paid `counterparty`, its batch evaluated (score 0: no label yet). */
async function walletThatPaid(counterparty: string) {
  const wallet = await track(t, token);
  await ingestTransactions(t, token, [tx({ from: wallet.address, to: counterparty, amount: 1, blockTime: clock++ })]);
  await batchesEvaluated(t);
  return wallet;
}

/** Labels `address` sanctioned, then takes the label back: the wallets that paid it go 0 → 90 → 0, unevaluated. */
async function labelledAndTakenBack(address: string): Promise<void> {
  expect((await putLabels(t, token, [{ address, category: "sanctioned", score: 100 }])).statusCode).toBe(200);
  expect((await removeLabel(address)).statusCode).toBe(200);
}

describe("a risk_score_increase alert and the score changes made before it", () => {
  it("does not fire for a label loaded and taken back before the alert was created, evaluated after it (the risk path)", async () => {
    const sanctioned = randomAddress();
    const wallet = await walletThatPaid(sanctioned);
    await labelledAndTakenBack(sanctioned);
    expect(await historyOf(wallet.address)).toMatchObject([
      { previous: 0, score: 90, evaluated: false },
      { previous: 90, score: 0, evaluated: false },
    ]);
    expect(await riskScoreOf(wallet.walletId)).toBe(0);

    // Created at score 0, which it stays at.
    const alertId = await createAlert(t, token, { walletId: wallet.walletId, condition: "risk_score_increase", threshold: 10 });
    await riskJobsRun();

    expect((await historyOf(wallet.address)).map((change) => change.evaluated)).toEqual([true, true]);
    expect(await eventsOf(t, alertId)).toEqual([]);

    // It still judges the changes made after it: a real exposure pages.
    await labelledAndTakenBack(randomAddress()); // a label of an address the wallet never paid: no change
    expect((await putLabels(t, token, [{ address: sanctioned, category: "sanctioned", score: 100 }])).statusCode).toBe(200);
    await riskJobsRun();
    const rise = (await historyOf(wallet.address)).at(-1)!;
    expect(await eventsOf(t, alertId)).toMatchObject([{ dedupeKey: `score:${rise.id}`, observed: 90 }]);
  });

  it("does not fire for the earlier changes that a batch's evaluation takes along (the batch path)", async () => {
    const [mistaken, sanctioned] = [randomAddress(), randomAddress()];
    const wallet = await walletThatPaid(mistaken);
    await labelledAndTakenBack(mistaken);
    const alertId = await createAlert(t, token, { walletId: wallet.walletId, condition: "risk_score_increase", threshold: 10 });

    // A batch that raises the score is evaluated before the two label changes' risk jobs run:
    // it evaluates them first, in order, then its own change.
    expect((await putLabels(t, token, [{ address: sanctioned, category: "sanctioned", score: 100 }])).statusCode).toBe(200);
    await ingestTransactions(t, token, [tx({ from: wallet.address, to: sanctioned, amount: 1, blockTime: clock++ })]);
    await batchesEvaluated(t);

    const history = await historyOf(wallet.address);
    expect(history).toMatchObject([
      { previous: 0, score: 90, evaluated: true },
      { previous: 90, score: 0, evaluated: true },
      { previous: 0, score: 90, evaluated: true },
    ]);
    expect(await eventsOf(t, alertId)).toMatchObject([{ dedupeKey: `score:${history[2]!.id}`, observed: 90 }]);
    await riskJobsRun();
    expect(await eventsOf(t, alertId)).toHaveLength(1);
  });

  it("does not fire, once resumed, for a rise made while it was paused, and measures the next rise from its baseline", async () => {
    const [sanctioned, mixer] = [randomAddress(), randomAddress()];
    const wallet = await track(t, token);
    await ingestTransactions(t, token, [
      tx({ from: wallet.address, to: sanctioned, amount: 1, blockTime: clock++ }),
      tx({ from: wallet.address, to: mixer, amount: 1, blockTime: clock++ }),
    ]);
    await batchesEvaluated(t);
    const alertId = await createAlert(t, token, { walletId: wallet.walletId, condition: "risk_score_increase", threshold: 10 });

    expect((await patchAlert(alertId, { status: "paused" })).statusCode).toBe(200);
    expect((await putLabels(t, token, [{ address: sanctioned, category: "sanctioned", score: 100 }])).statusCode).toBe(200); // 0 → 90
    expect((await patchAlert(alertId, { status: "active" })).statusCode).toBe(200);
    await riskJobsRun();
    expect(await eventsOf(t, alertId)).toEqual([]);

    // The baseline stayed 0 (README: a rise during the pause is not taken in), so the next rise
    // fires with the whole of it.
    expect((await putLabels(t, token, [{ address: mixer, category: "mixer", score: 90 }])).statusCode).toBe(200); // 90 → 96
    await riskJobsRun();
    const rise = (await historyOf(wallet.address)).at(-1)!;
    expect(rise).toMatchObject({ previous: 90, score: 96 });
    expect(await eventsOf(t, alertId)).toMatchObject([{ dedupeKey: `score:${rise.id}`, observed: 96 }]);
  });
});
