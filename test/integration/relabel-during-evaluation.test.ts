// A label change that commits while an evaluation is under way, between the evaluation's read
// of the labels and its write of the scores: the scores it writes must follow the label as it
// is at its commit, or a downgraded label's factor comes back through the batch and stays.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { storeTransactionBatch } from "../../src/ingest/store.ts";
import { evaluateBatch } from "../../src/pipeline/evaluate-batch.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { randomAddress } from "../helpers/chain.ts";
import { evaluateBehindHeldBatch } from "../helpers/held-evaluation.ts";
import { putLabels, track, tx } from "../helpers/pipeline.ts";
import { bearer } from "../helpers/seed.ts";

let t: TestApp;
let alice: string;
const now = Math.floor(Date.now() / 1000);

beforeAll(async () => {
  t = await startTestApp("relabel-during-evaluation");
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
});
