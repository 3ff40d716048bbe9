// DELETE /v1/risk/labels removes labels (a delisting, a row loaded by mistake) through the rescore
// of a label change, and GET /v1/risk/labels/{address} reads one back (src/http/routes/risk-labels.ts).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runReconcileOnce } from "../../src/pipeline/reconcile.ts";
import { recordLabelRemovals } from "../../src/pipeline/relabel.ts";
import type { RunningWorkers } from "../../src/queue/run-workers.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { randomAddress } from "../helpers/chain.ts";
import { createAlert, eventsOf, putLabels, settled, startWorkers, track, tx } from "../helpers/pipeline.ts";
import { bearer, errorPaths, expectProblem, ingestTransactions } from "../helpers/seed.ts";

let t: TestApp;
let workers: RunningWorkers;
let token: string;
let clock = Math.floor(Date.now() / 1000);

beforeAll(async () => {
  t = await startTestApp("risk-labels-remove");
  workers = startWorkers(t);
  token = await t.token("operator");
});
afterAll(async () => {
  await workers.close();
  await t.close();
});

const remove = (payload: unknown, auth = token) =>
  t.app.inject({ method: "DELETE", url: "/v1/risk/labels", headers: bearer(auth), payload: payload as object });
const getLabel = (address: string, auth = token) => t.app.inject({ url: `/v1/risk/labels/${address}`, headers: bearer(auth) });

async function riskOf(walletId: string) {
  const body = (await t.app.inject({ url: `/v1/wallets/${walletId}`, headers: bearer(token) })).json();
  return { riskScore: body.riskScore, riskFactors: body.riskFactors };
}
const historyOf = (address: string) =>
  t.deps.sql<{ previous: number; score: number; cause: string }[]>`
    select previous_score as previous, score, cause from risk_score_history where address = ${address} order by id`;

/** A tracked wallet that paid `counterparty`, labelled sanctioned: scored 90. */
async function sanctionedExposure(): Promise<{ walletId: string; address: string; counterparty: string }> {
  const wallet = await track(t, token);
  const counterparty = randomAddress();
  await ingestTransactions(t, token, [tx({ from: wallet.address, to: counterparty, amount: 1, blockTime: clock++ })]);
  await settled(t);
  expect((await putLabels(t, token, [{ address: counterparty, category: "sanctioned", score: 100, source: "ofac-sdn" }])).statusCode).toBe(200);
  await settled(t);
  expect(await riskOf(wallet.walletId)).toEqual({ riskScore: 90, riskFactors: ["sanctioned_counterparty"] });
  return { ...wallet, counterparty };
}

describe("DELETE /v1/risk/labels", () => {
  it("removes a sanctioned label: a wallet that dealt with it falls from 90 to 0, in its history, and no risk_score_increase fires", async () => {
    const wallet = await track(t, token);
    const counterparty = randomAddress();
    const alertId = await createAlert(t, token, { walletId: wallet.walletId, condition: "risk_score_increase", threshold: 50 });
    await ingestTransactions(t, token, [tx({ from: counterparty, to: wallet.address, amount: 1, blockTime: clock++ })]);
    // Evaluated before the label comes: the rise is the label load's, not the batch's (an
    // evaluation still under way would read the new label and score the rise itself).
    await settled(t);
    const sanctioning = await putLabels(t, token, [{ address: counterparty, category: "sanctioned", score: 100, source: "ofac-sdn" }]);
    await settled(t);
    expect(await riskOf(wallet.walletId)).toEqual({ riskScore: 90, riskFactors: ["sanctioned_counterparty"] });
    expect(await eventsOf(t, alertId)).toHaveLength(1);

    const res = await remove({ addresses: [counterparty] });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ removed: 1, loadId: expect.stringMatching(/^lld_/) });
    await settled(t);

    expect(await riskOf(wallet.walletId)).toEqual({ riskScore: 0, riskFactors: [] });
    // Each change names the load that caused it (label_changes.load_id).
    expect(await historyOf(wallet.address)).toEqual([
      { previous: 0, score: 90, cause: `labels:${sanctioning.json<{ loadId: string }>().loadId}` },
      { previous: 90, score: 0, cause: `labels:${res.json<{ loadId: string }>().loadId}` },
    ]);
    expect(await eventsOf(t, alertId)).toHaveLength(1);
    const [owed] = await t.deps.sql<{ n: number }[]>`select count(*)::int as n from label_rescores`;
    expect(owed!.n).toBe(0);
  });

  it("counts only the addresses that had a label: an unknown one removes nothing and is no error", async () => {
    expect((await remove({ addresses: [randomAddress()] })).json()).toEqual({ removed: 0, loadId: expect.stringMatching(/^lld_/) });
    const labelled = randomAddress();
    await putLabels(t, token, [{ address: labelled, category: "scam", score: 80 }]);
    expect((await remove({ addresses: [randomAddress(), labelled] })).json()).toEqual({ removed: 1, loadId: expect.stringMatching(/^lld_/) });
    // Removed already: a second removal finds nothing.
    expect((await remove({ addresses: [labelled] })).json()).toEqual({ removed: 0, loadId: expect.stringMatching(/^lld_/) });
  });

  const address = randomAddress();
  const cases: Array<{ name: string; body: unknown; path: string }> = [
    { name: "the same address twice", body: { addresses: [address, randomAddress(), address] }, path: "body.addresses.2" },
    { name: "an address of the wrong length", body: { addresses: [address, "2".repeat(32)] }, path: "body.addresses.1" },
    { name: "an address that is not base58", body: { addresses: ["0OIl".repeat(11)] }, path: "body.addresses.0" },
    { name: "an empty list", body: { addresses: [] }, path: "body.addresses" },
    { name: "an unknown field", body: { addresses: [address], reason: "delisted" }, path: "body.reason" },
    { name: "labels instead of addresses", body: { labels: [{ address, category: "scam", score: 50 }] }, path: "body.labels" },
  ];
  for (const c of cases) {
    it(`rejects ${c.name} with 400 naming ${c.path}, and removes nothing`, async () => {
      await putLabels(t, token, [{ address, category: "mixer", score: 70 }]);
      const body = expectProblem(await remove(c.body), 400, "validation_failed");
      expect(errorPaths(body)).toContain(c.path);
      expect((await getLabel(address)).statusCode).toBe(200);
    });
  }

  it("rejects a request without a body, and more than 10,000 addresses, with 400", async () => {
    expectProblem(await t.app.inject({ method: "DELETE", url: "/v1/risk/labels", headers: bearer(token) }), 400, "validation_failed");
    const addresses = Array.from({ length: 10_001 }, () => randomAddress());
    expectProblem(await remove({ addresses }), 400, "validation_failed");
  });

  it("answers 401 without a token and 403 without the risk:write scope, and removes nothing", async () => {
    const labelled = randomAddress();
    await putLabels(t, token, [{ address: labelled, category: "hack", score: 95 }]);
    expectProblem(await t.app.inject({ method: "DELETE", url: "/v1/risk/labels", payload: { addresses: [labelled] } }), 401, "unauthorized");
    const readOnly = await t.token("operator", "alerts:read wallets:read");
    expectProblem(await remove({ addresses: [labelled] }, readOnly), 403, "forbidden");
    expect((await getLabel(labelled)).json()).toMatchObject({ category: "hack" });
  });

  it("leaves the rescore to the reconciler when the process ended after the removal committed", async () => {
    const wallet = await sanctionedExposure();
    // The first step alone: the label deleted, with the record of the rescore it owes.
    const removal = await recordLabelRemovals(t.deps, [wallet.counterparty], undefined, "ops");
    expect(removal).toMatchObject({ removed: 1, rescoreId: expect.any(Number) });
    expect((await getLabel(wallet.counterparty)).statusCode).toBe(404);
    expect(await riskOf(wallet.walletId)).toEqual({ riskScore: 90, riskFactors: ["sanctioned_counterparty"] });

    const swept = await runReconcileOnce({ ...t.deps, now: () => new Date(Date.now() + 60_000) }, { graceMs: 0 });
    expect(swept.labelRescores).toBe(1);
    expect(await riskOf(wallet.walletId)).toEqual({ riskScore: 0, riskFactors: [] });
    // The rescore's record keeps the load: the reconciler's score change names it too.
    expect((await historyOf(wallet.address)).at(-1)).toEqual({ previous: 90, score: 0, cause: `labels:${removal.loadId}` });
  });
});

describe("GET /v1/risk/labels/{address}", () => {
  it("returns the label, and 404 once it is removed", async () => {
    const labelled = randomAddress();
    const before = Date.now();
    await putLabels(t, token, [{ address: labelled, category: "sanctioned", score: 100, source: "ofac-sdn" }]);
    const res = await getLabel(labelled);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    const label = { category: "sanctioned", score: 100, source: "ofac-sdn", updatedAt: expect.stringMatching(/Z$/) };
    expect(body).toEqual({ address: labelled, ...label, labels: [label] });
    expect(Date.parse(body.updatedAt)).toBeGreaterThanOrEqual(before - 5_000);

    // Replaced by the same list; a label without a source is another list's.
    await putLabels(t, token, [{ address: labelled, category: "exchange", score: 10, source: "ofac-sdn" }]);
    expect((await getLabel(labelled)).json()).toMatchObject({ category: "exchange", score: 10, source: "ofac-sdn", labels: [{ score: 10 }] });
    await putLabels(t, token, [{ address: labelled, category: "flagged", score: 10 }]);
    expect((await getLabel(labelled)).json()).toMatchObject({ category: "flagged", score: 10, source: null, labels: [{}, {}] });

    expect((await remove({ addresses: [labelled] })).json()).toEqual({ removed: 2, loadId: expect.stringMatching(/^lld_/) });
    expectProblem(await getLabel(labelled), 404, "not_found");
  });

  it("answers 404 for an address never labelled and 400 naming params.address for one that is not an address", async () => {
    expectProblem(await getLabel(randomAddress()), 404, "not_found");
    const body = expectProblem(await getLabel("2".repeat(32)), 400, "validation_failed");
    expect(errorPaths(body)).toContain("params.address");
  });

  it("answers 403 without the risk:write scope", async () => {
    const labelled = randomAddress();
    await putLabels(t, token, [{ address: labelled, category: "scam", score: 60 }]);
    expectProblem(await getLabel(labelled, await t.token("operator", "alerts:read wallets:read")), 403, "forbidden");
  });
});
