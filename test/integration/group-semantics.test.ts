// An evaluation group (the open batches one job evaluates together) is a matter of load, not of
// meaning: what fires must be what the same batches fire when evaluated one at a time. Each
// scenario here is stored once per mode, on wallets of its own, and evaluated either batch by
// batch (EVALUATION_GROUP_TRANSACTIONS 1) or as one group; both must fire the expected events.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { Transaction } from "../../src/domain/types.ts";
import { storeTransactionBatch } from "../../src/ingest/store.ts";
import { evaluateBatch } from "../../src/pipeline/evaluate-batch.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { randomAddress } from "../helpers/chain.ts";
import { createAlert, eventsOf, putLabels, track, tx } from "../helpers/pipeline.ts";

let t: TestApp;
let token: string;
let clock = Math.floor(Date.now() / 1000);

beforeAll(async () => {
  t = await startTestApp("group-semantics");
  token = await t.token("alice");
});
afterAll(async () => {
  await t.close();
});
// Each test starts with no open batch, so that a group holds only what the test stored.
beforeEach(async () => {
  await t.deps.sql`update ingest_batches set evaluated_at = now() where evaluated_at is null`;
});

const MODES = [
  { name: "one batch at a time", groupTransactions: 1 },
  { name: "all batches in one group", groupTransactions: 10_000 },
] as const;

/** Stores the batches (no job runs), then evaluates them in the mode's groups, oldest first. */
async function storeAndEvaluate(batches: Array<Array<Partial<Transaction>>>, groupTransactions: number): Promise<void> {
  const ids: string[] = [];
  for (const batch of batches) {
    const { batchId } = await storeTransactionBatch(t.deps, batch.map((overrides) => tx({ amount: 1, blockTime: clock++, ...overrides })));
    ids.push(batchId!);
  }
  const deps = { ...t.deps, config: { ...t.deps.config, evaluationGroupTransactions: groupTransactions } };
  for (const batchId of ids) await evaluateBatch(deps, batchId);
}

async function labelled(category: string, score: number): Promise<string> {
  const address = randomAddress();
  expect((await putLabels(t, token, [{ address, category, score }])).statusCode).toBe(200);
  return address;
}

/** The address's score changes recorded by batch evaluations, oldest first. */
function batchScoreChanges(address: string) {
  return t.deps.sql<{ previous: number; score: number }[]>`
    select previous_score as previous, score from risk_score_history
    where address = ${address} and cause like 'batch:%' order by id`;
}

describe.each(MODES)("evaluated $name", ({ groupTransactions }) => {
  it("fires risk_score_increase once for each batch whose rise reaches the threshold", async () => {
    const [mixer, sanctioned] = [await labelled("mixer", 90), await labelled("sanctioned", 100)];
    const wallet = await track(t, token);
    const alertId = await createAlert(t, token, { walletId: wallet.walletId, condition: "risk_score_increase", threshold: 10 });

    await storeAndEvaluate([[{ from: wallet.address, to: mixer }], [{ from: wallet.address, to: sanctioned }]], groupTransactions);

    // 0 → 60 (mixer), then 60 → 96 (sanctioned as well): two rises of at least 10.
    expect((await eventsOf(t, alertId)).map((e) => e.observed)).toEqual([60, 36]);
    expect(await batchScoreChanges(wallet.address)).toEqual([
      { previous: 0, score: 60 },
      { previous: 60, score: 96 },
    ]);
  });

  it("fires risk_score_increase for a rise that a later batch takes back", async () => {
    const wallet = await track(t, token);
    const alertId = await createAlert(t, token, { walletId: wallet.walletId, condition: "risk_score_increase", threshold: 10 });
    // Ten new counterparties within the hour: new_counterparty_burst, 0 → 15. Two hours later
    // the burst is over and the score is back to 0.
    const burst = Array.from({ length: 10 }, () => ({ from: wallet.address, to: randomAddress() }));
    const later = clock + 2 * 3600;

    await storeAndEvaluate([burst, [{ from: wallet.address, to: randomAddress(), blockTime: later }]], groupTransactions);
    clock = later + 1;

    expect((await eventsOf(t, alertId)).map((e) => e.observed)).toEqual([15]);
    expect(await batchScoreChanges(wallet.address)).toEqual([
      { previous: 0, score: 15 },
      { previous: 15, score: 0 },
    ]);
  });

  it("fires suspicious_counterparty on a tracked counterparty's score from the batches before", async () => {
    const sanctioned = await labelled("sanctioned", 100);
    const counterparty = await track(t, token);
    const wallet = await track(t, token);
    const alertId = await createAlert(t, token, { walletId: wallet.walletId, condition: "suspicious_counterparty", threshold: 75 });

    // The counterparty deals with a sanctioned address (its score 0 → 90), then the wallet pays it.
    await storeAndEvaluate(
      [[{ from: counterparty.address, to: sanctioned }], [{ from: wallet.address, to: counterparty.address }]],
      groupTransactions,
    );

    expect((await eventsOf(t, alertId)).map((e) => e.observed)).toEqual([90]);
  });
});
