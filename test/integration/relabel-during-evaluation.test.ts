// A label change that commits while an evaluation is under way, between the evaluation's read
// of the labels and its write of the scores: the scores it writes must follow the label as it
// is at its commit, or a downgraded label's factor comes back through the batch and stays.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { storeTransactionBatch } from "../../src/ingest/store.ts";
import postgres from "postgres";
import { evaluateBatch, type BatchOutcome } from "../../src/pipeline/evaluate-batch.ts";
import { recordLabels } from "../../src/pipeline/relabel.ts";
import { withTimeout } from "../../src/with-timeout.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { randomAddress } from "../helpers/chain.ts";
import { evaluateBehindHeldBatch } from "../helpers/held-evaluation.ts";
import { holdTransaction } from "../helpers/held-transaction.ts";
import { putLabels, track, tx, waitFor } from "../helpers/pipeline.ts";
import { bearer } from "../helpers/seed.ts";

let t: TestApp;
let alice: string;
const now = Math.floor(Date.now() / 1000);

beforeAll(async () => {
  // The held batch must keep the evaluation waiting however slow the machine: at the default
  // EVALUATION_ORDER_WAIT (5 s) a loaded machine could let the evaluation pass it and commit.
  t = await startTestApp("relabel-during-evaluation", { EVALUATION_ORDER_WAIT: "60s" });
  alice = await t.token("alice");
});
afterAll(async () => {
  await t.close();
});

async function store(txs: Parameters<typeof storeTransactionBatch>[1]): Promise<string> {
  return (await storeTransactionBatch(t.deps, txs)).batchId!;
}

async function riskOf(walletId: string) {
  const body = (await t.app.inject({ url: `/v1/wallets/${walletId}`, headers: bearer(alice) })).json();
  return { riskScore: body.riskScore, riskFactors: body.riskFactors };
}

describe("a label change during an evaluation", () => {
  it("does not let the evaluation bring back the factor of a label downgraded before it committed", async () => {
    const wallet = await track(t, alice);
    const scam = randomAddress();
    expect((await putLabels(t, alice, [{ address: scam, category: "scam", score: 90 }])).statusCode).toBe(200);
    const first = await store([tx({ from: wallet.address, to: scam, blockTime: now })]);
    await evaluateBatch(t.deps, first);
    expect(await riskOf(wallet.walletId)).toEqual({ riskScore: 50, riskFactors: ["scam_interaction"] });

    // An earlier batch that another evaluation holds (counted, not yet committed) keeps this
    // evaluation waiting after it has read the labels and before it reads and writes scores.
    const ahead = await store([tx({ from: randomAddress(), to: randomAddress(), blockTime: now + 1 })]);
    const second = await store([tx({ from: wallet.address, to: scam, blockTime: now + 2 })]);
    const { evaluation, release } = await evaluateBehindHeldBatch(t, ahead, second);

    // The operator downgrades the label meanwhile: the wallet's exposure is recomputed at once.
    expect((await putLabels(t, alice, [{ address: scam, category: "exchange", score: 10 }])).statusCode).toBe(200);
    expect(await riskOf(wallet.walletId)).toEqual({ riskScore: 0, riskFactors: [] });

    await release();
    expect(await evaluation).toMatchObject({ status: "evaluated" });
    expect(await riskOf(wallet.walletId)).toEqual({ riskScore: 0, riskFactors: [] });
  });

  it("scores with every list's label as it is at the commit: another list's label of the counterparty added after the evaluation read them counts", async () => {
    const wallet = await track(t, alice);
    const counterparty = randomAddress();
    expect((await putLabels(t, alice, [{ address: counterparty, category: "scam", score: 70, source: "vendor-x" }])).statusCode).toBe(200);
    let evaluation!: Promise<BatchOutcome>;
    let release!: () => Promise<void>;

    // The evaluation's read of the labels is held up by a lock on the table, seen waiting, let go,
    // and seen done (its session moved on): it read vendor-x's scam alone. It then waits for the
    // batch ahead, which another evaluation holds. On connections of their own: the evaluation
    // and its waits take the app's small pool.
    const side = postgres(t.config.databaseUrl, { max: 2, onnotice: () => {} });
    try {
      const unlock = await holdTransaction(side, (held) => held`lock table risk_labels in access exclusive mode`);
      const ahead = await store([tx({ from: randomAddress(), to: randomAddress(), blockTime: now + 10 })]);
      const batch = await store([tx({ from: wallet.address, to: counterparty, blockTime: now + 11 })]);
      const held = await evaluateBehindHeldBatch(t, ahead, batch);
      ({ evaluation, release } = held);
      const reading = await waitFor("the evaluation to wait to read the labels", async () => {
        const [row] = await side<{ pid: number; started: string }[]>`
          select pid, query_start::text as started from pg_stat_activity
          where datname = current_database() and wait_event_type = 'Lock' and query like '%from risk_labels%'`;
        return row;
      });
      await unlock();
      await waitFor("the evaluation to have read the labels", async () => {
        const [row] = await side<{ done: boolean }[]>`
          select state = 'idle' or query_start::text <> ${reading.started} as done from pg_stat_activity where pid = ${reading.pid}`;
        return row?.done;
      });
    } finally {
      await side.end();
    }

    // Another list labels the counterparty a mixer: only the first step, so that no rescore
    // corrects the wallet afterwards; the evaluation must see it when it writes.
    // Each step bounded and named: a run that hung here once (under a full suite) said only
    // that the test timed out.
    await withTimeout(
      () => recordLabels(t.deps, [{ address: counterparty, category: "mixer", score: 90, source: "vendor-y" }], "ops"),
      20_000,
      "the label load during the held evaluation",
    );
    await withTimeout(release, 10_000, "the release of the batch ahead");
    expect(await withTimeout(() => evaluation, 20_000, "the held evaluation once released")).toMatchObject({ status: "evaluated" });
    expect(await riskOf(wallet.walletId)).toEqual({ riskScore: 80, riskFactors: ["mixer_interaction", "scam_interaction"] });
  }, 90_000);
});
