// Labels per address and source: OFAC's list and each vendor's keep their own label of an
// address, every one of them counts for the score, and a removal touches one list's or all
// (src/db/queries/risk-labels.ts, src/pipeline/relabel.ts).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mintToken } from "../../src/http/mint-token.ts";
import type { RunningWorkers } from "../../src/queue/run-workers.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { randomAddress } from "../helpers/chain.ts";
import { TEST_JWT_SECRET } from "../helpers/env.ts";
import { startLoggedApp } from "../helpers/logged-app.ts";
import { createAlert, eventsOf, putLabels, settled, startWorkers, track, tx } from "../helpers/pipeline.ts";
import { bearer, ingestTransactions } from "../helpers/seed.ts";

let t: TestApp;
let workers: RunningWorkers;
let token: string;
let clock = Math.floor(Date.now() / 1000);

beforeAll(async () => {
  t = await startTestApp("risk-labels-sources");
  workers = startWorkers(t);
  token = await t.token("operator");
});
afterAll(async () => {
  await workers.close();
  await t.close();
});

type Label = { address: string; category: string; score: number; source?: string };

async function label(...labels: Label[]): Promise<void> {
  const res = await putLabels(t, token, labels);
  expect(res.statusCode, res.body).toBe(200);
  await settled(t);
}

async function remove(payload: unknown) {
  const res = await t.app.inject({ method: "DELETE", url: "/v1/risk/labels", headers: bearer(token), payload: payload as object });
  expect(res.statusCode, res.body).toBe(200);
  await settled(t);
  return res.json() as { removed: number; loadId: string };
}

const getLabels = (address: string) => t.app.inject({ url: `/v1/risk/labels/${address}`, headers: bearer(token) });

async function riskOf(walletId: string) {
  const body = (await t.app.inject({ url: `/v1/wallets/${walletId}`, headers: bearer(token) })).json();
  return { riskScore: body.riskScore, riskFactors: body.riskFactors };
}

/** A tracked wallet that paid `counterparty` (not labelled yet), with a risk_score_increase alert at threshold 10. */
async function walletThatPaid(): Promise<{ walletId: string; address: string; counterparty: string; alertId: string }> {
  const wallet = await track(t, token);
  const counterparty = randomAddress();
  const alertId = await createAlert(t, token, { walletId: wallet.walletId, condition: "risk_score_increase", threshold: 10 });
  await ingestTransactions(t, token, [tx({ from: wallet.address, to: counterparty, amount: 5, blockTime: clock++ })]);
  await settled(t);
  return { ...wallet, counterparty, alertId };
}

describe("labels from two lists for one address", () => {
  it("keeps both, and the wallets that dealt with it get both factors: OFAC's sanctioned and a vendor's mixer score 96", async () => {
    const wallet = await walletThatPaid();
    await label({ address: wallet.counterparty, category: "sanctioned", score: 100, source: "ofac-sdn" });
    await label({ address: wallet.counterparty, category: "mixer", score: 80, source: "vendor-x" });

    const rows = await t.deps.sql<{ source: string; category: string }[]>`
      select source, category from risk_labels where address = ${wallet.counterparty} order by source`;
    expect(rows).toEqual([
      { source: "ofac-sdn", category: "sanctioned" },
      { source: "vendor-x", category: "mixer" },
    ]);
    expect(await riskOf(wallet.walletId)).toEqual({ riskScore: 96, riskFactors: ["sanctioned_counterparty", "mixer_interaction"] });
  });

  it("scores a batch that meets the address with every list's label, not one of them", async () => {
    const counterparty = randomAddress();
    await label(
      { address: counterparty, category: "sanctioned", score: 100, source: "ofac-sdn" },
      { address: counterparty, category: "scam", score: 70, source: "vendor-x" },
    );
    const wallet = await track(t, token);
    await ingestTransactions(t, token, [tx({ from: counterparty, to: wallet.address, amount: 1, blockTime: clock++ })]);
    await settled(t);
    expect(await riskOf(wallet.walletId)).toEqual({ riskScore: 95, riskFactors: ["sanctioned_counterparty", "scam_interaction"] });
  });

  it("a vendor's import after OFAC's keeps the OFAC factor and the wallet's score, and pages no one again when the lists are reloaded", async () => {
    const wallet = await walletThatPaid();
    await label({ address: wallet.counterparty, category: "sanctioned", score: 100, source: "ofac-sdn" });
    expect(await riskOf(wallet.walletId)).toEqual({ riskScore: 90, riskFactors: ["sanctioned_counterparty"] });
    expect(await eventsOf(t, wallet.alertId)).toMatchObject([{ observed: 90 }]);

    // The vendor calls it an exchange with a low score: no factor of its own, and OFAC's stays.
    await label({ address: wallet.counterparty, category: "exchange", score: 20, source: "vendor-x" });
    expect(await riskOf(wallet.walletId)).toEqual({ riskScore: 90, riskFactors: ["sanctioned_counterparty"] });

    // Both lists loaded again, night after night: nothing changes, nobody is paged.
    for (let night = 0; night < 2; night++) {
      await label({ address: wallet.counterparty, category: "sanctioned", score: 100, source: "ofac-sdn" });
      await label({ address: wallet.counterparty, category: "exchange", score: 20, source: "vendor-x" });
    }
    expect(await riskOf(wallet.walletId)).toEqual({ riskScore: 90, riskFactors: ["sanctioned_counterparty"] });
    const history = await t.deps.sql`select score from risk_score_history where address = ${wallet.address} order by id`;
    expect(history).toEqual([{ score: 90 }]);
    expect(await eventsOf(t, wallet.alertId)).toHaveLength(1);
  });
});

describe("DELETE /v1/risk/labels with and without a source", () => {
  it("with a source removes only that list's label: the score falls to what the remaining label gives", async () => {
    const wallet = await walletThatPaid();
    await label(
      { address: wallet.counterparty, category: "sanctioned", score: 100, source: "ofac-sdn" },
      { address: wallet.counterparty, category: "mixer", score: 80, source: "vendor-x" },
    );
    expect((await riskOf(wallet.walletId)).riskScore).toBe(96);

    // OFAC delists the address; the vendor still calls it a mixer.
    const delisting = await remove({ addresses: [wallet.counterparty], source: "ofac-sdn" });
    expect(delisting).toEqual({ removed: 1, loadId: expect.stringMatching(/^lld_/) });
    expect(await riskOf(wallet.walletId)).toEqual({ riskScore: 60, riskFactors: ["mixer_interaction"] });
    expect((await getLabels(wallet.counterparty)).json()).toMatchObject({
      category: "mixer",
      source: "vendor-x",
      labels: [{ category: "mixer", source: "vendor-x" }],
    });
    const history = await t.deps.sql`select previous_score as previous, score, cause from risk_score_history where address = ${wallet.address} order by id`;
    expect(history.at(-1)).toEqual({ previous: 96, score: 60, cause: `labels:${delisting.loadId}` });

    // Null names the labels loaded without a source: there is none here.
    expect(await remove({ addresses: [wallet.counterparty], source: null })).toEqual({ removed: 0, loadId: expect.stringMatching(/^lld_/) });
    // A source that never labelled it removes nothing either.
    expect(await remove({ addresses: [wallet.counterparty], source: "ofac-sdn" })).toEqual({ removed: 0, loadId: expect.stringMatching(/^lld_/) });
    expect((await riskOf(wallet.walletId)).riskScore).toBe(60);
  });

  it("with source null removes only the labels loaded without a source", async () => {
    const address = randomAddress();
    await label({ address, category: "scam", score: 80 }, { address, category: "hack", score: 90, source: "vendor-y" });
    expect(await remove({ addresses: [address], source: null })).toEqual({ removed: 1, loadId: expect.stringMatching(/^lld_/) });
    expect((await getLabels(address)).json()).toMatchObject({ category: "hack", source: "vendor-y", labels: [{ source: "vendor-y" }] });
  });

  it("without a source removes every list's label of the addresses, and counts each", async () => {
    const wallet = await walletThatPaid();
    const other = randomAddress();
    await label(
      { address: wallet.counterparty, category: "sanctioned", score: 100, source: "ofac-sdn" },
      { address: wallet.counterparty, category: "mixer", score: 80, source: "vendor-x" },
      { address: other, category: "scam", score: 60 },
    );
    expect((await riskOf(wallet.walletId)).riskScore).toBe(96);

    expect(await remove({ addresses: [wallet.counterparty, other] })).toEqual({ removed: 3, loadId: expect.stringMatching(/^lld_/) });
    expect(await riskOf(wallet.walletId)).toEqual({ riskScore: 0, riskFactors: [] });
    expect((await getLabels(wallet.counterparty)).statusCode).toBe(404);
    expect((await getLabels(other)).statusCode).toBe(404);
  });

  it("refuses an empty source with 400, and removes nothing", async () => {
    const address = randomAddress();
    await label({ address, category: "scam", score: 80, source: "vendor-x" });
    const res = await t.app.inject({ method: "DELETE", url: "/v1/risk/labels", headers: bearer(token), payload: { addresses: [address], source: "" } });
    expect(res.statusCode).toBe(400);
    expect((await getLabels(address)).statusCode).toBe(200);
  });
});

describe("GET /v1/risk/labels/{address} with labels from several lists", () => {
  it("answers the effective label at the top level and every list's label, highest score first; ties go to the heavier factor, then the source", async () => {
    const address = randomAddress();
    await label(
      { address, category: "exchange", score: 20, source: "vendor-a" },
      { address, category: "mixer", score: 100, source: "vendor-b" },
      { address, category: "sanctioned", score: 100, source: "ofac-sdn" },
      { address, category: "exchange", score: 20 },
    );
    const body = (await getLabels(address)).json();
    const stamp = expect.stringMatching(/Z$/);
    expect(body).toEqual({
      address,
      category: "sanctioned",
      score: 100,
      source: "ofac-sdn",
      updatedAt: stamp,
      labels: [
        { category: "sanctioned", score: 100, source: "ofac-sdn", updatedAt: stamp },
        { category: "mixer", score: 100, source: "vendor-b", updatedAt: stamp },
        { category: "exchange", score: 20, source: null, updatedAt: stamp },
        { category: "exchange", score: 20, source: "vendor-a", updatedAt: stamp },
      ],
    });
  });

  it("shows the effective label as the wallet detail's label, in the shape it had", async () => {
    const wallet = await track(t, token);
    await label(
      { address: wallet.address, category: "exchange", score: 20, source: "vendor-a" },
      { address: wallet.address, category: "sanctioned", score: 100, source: "ofac-sdn" },
    );
    const body = (await t.app.inject({ url: `/v1/wallets/${wallet.walletId}`, headers: bearer(token) })).json();
    expect(body.label).toEqual({ category: "sanctioned", score: 100, source: "ofac-sdn" });
  });
});

describe("suspicious_counterparty with labels from several lists", () => {
  it("judges the counterparty by its highest label score and names that label's category", async () => {
    const wallet = await track(t, token);
    const counterparty = randomAddress();
    // OFAC first, the vendor's lower score after it: the one written last is not the one that counts.
    await label({ address: counterparty, category: "sanctioned", score: 100, source: "ofac-sdn" });
    await label({ address: counterparty, category: "exchange", score: 20, source: "vendor-x" });
    const alertId = await createAlert(t, token, { walletId: wallet.walletId, condition: "suspicious_counterparty", threshold: 90 });
    await ingestTransactions(t, token, [tx({ from: wallet.address, to: counterparty, amount: 1, blockTime: clock++ })]);
    await settled(t);

    const events = await t.deps.sql<{ observed: number; reason: string }[]>`
      select observed::float8 as observed, reason from alert_events where alert_id = ${alertId}`;
    expect(events).toHaveLength(1);
    expect(events[0]!.observed).toBe(100);
    expect(events[0]!.reason).toContain("(sanctioned, risk 100, threshold 90)");
  });
});

describe("the record of who changed labels", () => {
  it("logs each label change at info with the caller's sub and its counts, never the token", async () => {
    const logged = await startLoggedApp("risk-labels-sources-log", {}, "info");
    try {
      const bearerToken = await mintToken(TEST_JWT_SECRET, { sub: "list-loader", scope: "risk:write", ttlSeconds: 600 });
      const address = randomAddress();
      const put = await logged.app.inject({
        method: "PUT",
        url: "/v1/risk/labels",
        headers: { authorization: `Bearer ${bearerToken}` },
        payload: { labels: [{ address, category: "scam", score: 80, source: "vendor-x" }, { address, category: "hack", score: 90 }] },
      });
      expect(put.statusCode, put.body).toBe(200);
      const removal = await logged.app.inject({
        method: "DELETE",
        url: "/v1/risk/labels",
        headers: { authorization: `Bearer ${bearerToken}` },
        payload: { addresses: [address], source: "vendor-x" },
      });
      expect(removal.json()).toEqual({ removed: 1, loadId: expect.stringMatching(/^lld_/) });

      const changes = logged.lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => String(line.msg).startsWith("labels: "));
      expect(changes).toMatchObject([
        { level: 30, msg: "labels: upserted", caller: "list-loader", labels: 2, changedAddresses: 1, rescored: 0 },
        { level: 30, msg: "labels: removed", caller: "list-loader", source: "vendor-x", removed: 1, changedAddresses: 1, rescored: 0 },
      ]);
      expect(logged.lines.join("")).not.toContain(bearerToken);
      const [row] = await logged.deps.sql`select updated_by from risk_labels where address = ${address}`;
      expect(row).toEqual({ updated_by: "list-loader" });
    } finally {
      await logged.close();
    }
  });
});
