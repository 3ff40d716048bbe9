// A label change commits its labels first, with a record of the rescore it owes, and rescores
// the tracked addresses that dealt with them in a second transaction (src/pipeline/relabel.ts).
// What happens between the two steps, and when the process ends between them.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { storeTransactionBatch } from "../../src/ingest/store.ts";
import { evaluateBatch } from "../../src/pipeline/evaluate-batch.ts";
import { runReconcileOnce } from "../../src/pipeline/reconcile.ts";
import { recordLabels, rescoreRelabelled } from "../../src/pipeline/relabel.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { randomAddress } from "../helpers/chain.ts";
import { track, tx } from "../helpers/pipeline.ts";
import { holdTransaction } from "../helpers/held-transaction.ts";
import { bearer } from "../helpers/seed.ts";
import { waitFor } from "../helpers/wait.ts";

let t: TestApp;
let alice: string;
let clock = Math.floor(Date.now() / 1000);

beforeAll(async () => {
  t = await startTestApp("label-rescore");
  alice = await t.token("alice");
});
afterAll(async () => {
  await t.close();
});

async function riskOf(walletId: string) {
  const body = (await t.app.inject({ url: `/v1/wallets/${walletId}`, headers: bearer(alice) })).json();
  return { riskScore: body.riskScore, riskFactors: body.riskFactors };
}

/** Stores one transfer from `from` to `to` and evaluates its batch. */
async function dealtWith(from: string, to: string): Promise<void> {
  const { batchId } = await storeTransactionBatch(t.deps, [tx({ from, to, amount: 1, blockTime: clock++ })]);
  await evaluateBatch(t.deps, batchId!);
}

const owedRescores = async () => Number((await t.deps.sql`select count(*)::int as n from label_rescores`)[0]!.n);
const isOwed = async (id: number) => (await t.deps.sql`select 1 from label_rescores where id = ${id}`).length > 0;
const historyOf = async (address: string) =>
  (await t.deps.sql<{ score: number }[]>`select score from risk_score_history where address = ${address} order by id`).map((r) => r.score);

describe("a label change's rescore", () => {
  it("is done by the reconciler when the process ended after the labels committed", async () => {
    const wallet = await track(t, alice);
    const sanctioned = randomAddress();
    await dealtWith(wallet.address, sanctioned);
    expect(await riskOf(wallet.walletId)).toEqual({ riskScore: 0, riskFactors: [] });

    // The first step alone: the labels and the record of the rescore they owe.
    await recordLabels(t.deps, [{ address: sanctioned, category: "sanctioned", score: 100, source: "OFAC" }], "ops");
    expect(await owedRescores()).toBe(1);
    expect(await riskOf(wallet.walletId)).toEqual({ riskScore: 0, riskFactors: [] });

    const swept = await runReconcileOnce({ ...t.deps, now: () => new Date(Date.now() + 60_000) }, { graceMs: 0 });
    expect(swept.labelRescores).toBe(1);
    expect(await riskOf(wallet.walletId)).toMatchObject({ riskFactors: ["sanctioned_counterparty"] });
    expect(await owedRescores()).toBe(0);
  });

  it("leaves a batch stored between the two steps to its own evaluation, which reads the committed labels, and adds no second change", async () => {
    const wallet = await track(t, alice);
    const mixer = randomAddress();
    const { rescoreId } = await recordLabels(t.deps, [{ address: mixer, category: "mixer", score: 90, source: null }], "ops");
    // Stored and evaluated after the labels committed, before their rescore ran.
    await dealtWith(wallet.address, mixer);
    expect(await riskOf(wallet.walletId)).toMatchObject({ riskFactors: ["mixer_interaction"] });
    const changes = await historyOf(wallet.address);

    expect(await rescoreRelabelled(t.deps, rescoreId!)).toEqual({ rescored: 0, scoreChangeIds: [] });
    expect(await historyOf(wallet.address)).toEqual(changes);
    expect(await isOwed(rescoreId!)).toBe(false);
  });

  it("is taken once when the reconciler and the label change's own process both run it", async () => {
    const wallet = await track(t, alice);
    const scam = randomAddress();
    await dealtWith(wallet.address, scam);
    const { rescoreId } = await recordLabels(t.deps, [{ address: scam, category: "scam", score: 80, source: null }], "ops");
    const [first, second] = await Promise.all([rescoreRelabelled(t.deps, rescoreId!), rescoreRelabelled(t.deps, rescoreId!)]);
    expect(first.rescored + second.rescored).toBe(1);
    expect((await historyOf(wallet.address)).length).toBe(1);
  });
});

describe("a label change's rescore waiting for a lock", () => {
  it("scores what was committed while it waited: a payment to a sanctioned address made meanwhile is not overwritten", async () => {
    const [first, second] = [randomAddress(), randomAddress()].sort();
    const waitedFor = await track(t, alice, first!);
    const wallet = await track(t, alice, second!);
    const [flagged, sanctioned, hacker] = [randomAddress(), randomAddress(), randomAddress()];
    await dealtWith(waitedFor.address, hacker);
    await dealtWith(wallet.address, flagged);
    const { rescoreId } = await recordLabels(t.deps, [
      { address: flagged, category: "exchange", score: 60, source: null },
      { address: sanctioned, category: "sanctioned", score: 100, source: "OFAC" },
      { address: hacker, category: "hack", score: 95, source: null },
    ], "ops");
    // An evaluation holds the first wallet's score: the rescore, locking in address order, waits there.
    const release = await holdTransaction(t.deps.sql, (held) => held`select 1 from address_state where address = ${waitedFor.address} for update`);
    const rescoring = rescoreRelabelled(t.deps, rescoreId!);
    await waitFor(
      "the rescore to wait on the held score",
      async () => (await t.deps.sql`select 1 from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`).length > 0,
      5_000,
    );

    // Meanwhile the second wallet pays the sanctioned address, and its evaluation commits.
    await dealtWith(wallet.address, sanctioned);
    expect((await riskOf(wallet.walletId)).riskFactors).toContain("sanctioned_counterparty");
    await release();
    await rescoring;

    expect((await riskOf(wallet.walletId)).riskFactors).toEqual(["sanctioned_counterparty", "flagged_counterparty"]);
  });
});
