// PUT /v1/risk/labels: strict input, upserts, and the rescoring a changed label causes
// (history, then the `risk` job's evaluation of risk_score_increase alerts).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningWorkers } from "../../src/queue/run-workers.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { randomAddress } from "../helpers/chain.ts";
import { createAlert, eventsOf, settled, startWorkers, track, tx } from "../helpers/pipeline.ts";
import { holdTransaction, waitForALockWait } from "../helpers/held-transaction.ts";
import { bearer, errorPaths, expectProblem, ingestTransactions } from "../helpers/seed.ts";

let t: TestApp;
let workers: RunningWorkers;
let token: string;
const now = Math.floor(Date.now() / 1000);

beforeAll(async () => {
  t = await startTestApp("risk-labels");
  workers = startWorkers(t);
  token = await t.token("operator");
});
afterAll(async () => {
  await workers.close();
  await t.close();
});

const put = (payload: unknown, auth = token) =>
  t.app.inject({ method: "PUT", url: "/v1/risk/labels", headers: bearer(auth), payload: payload as object });

describe("PUT /v1/risk/labels input", () => {
  const address = randomAddress();
  const cases: Array<{ name: string; body: unknown; path: string }> = [
    { name: "an empty list", body: { labels: [] }, path: "body.labels" },
    { name: "a category outside the list", body: { labels: [{ address, category: "whale", score: 50 }] }, path: "body.labels.0.category" },
    { name: "a score above 100", body: { labels: [{ address, category: "scam", score: 101 }] }, path: "body.labels.0.score" },
    { name: "a fractional score", body: { labels: [{ address, category: "scam", score: 50.5 }] }, path: "body.labels.0.score" },
    { name: "a score given as a string", body: { labels: [{ address, category: "scam", score: "50" }] }, path: "body.labels.0.score" },
    { name: "an unknown field", body: { labels: [{ address, category: "scam", score: 50, note: "x" }] }, path: "body.labels.0" },
    { name: "an address of the wrong length", body: { labels: [{ address: "2".repeat(32), category: "scam", score: 50 }] }, path: "body.labels.0.address" },
    {
      name: "the same address twice",
      body: { labels: [{ address, category: "scam", score: 50 }, { address, category: "mixer", score: 60 }] },
      path: "body.labels.1.address",
    },
  ];
  for (const c of cases) {
    it(`rejects ${c.name} with 400 naming ${c.path}`, async () => {
      const body = expectProblem(await put(c.body), 400, "validation_failed");
      expect(errorPaths(body).some((p) => p.startsWith(c.path))).toBe(true);
    });
  }

  it("rejects more than 10,000 labels with 400", async () => {
    const labels = Array.from({ length: 10_001 }, () => ({ address, category: "scam", score: 50 }));
    expectProblem(await put({ labels }), 400, "validation_failed");
  });

  it("answers 401 without a token and 403 without the risk:write scope", async () => {
    const res = await t.app.inject({ method: "PUT", url: "/v1/risk/labels", payload: { labels: [] } });
    expectProblem(res, 401, "unauthorized");
    const readOnly = await t.token("operator", "alerts:read");
    expectProblem(await put({ labels: [{ address, category: "scam", score: 50 }] }, readOnly), 403, "forbidden");
  });
});

/**
 * A tracked wallet that paid `counterparty`, with a risk_score_increase alert (threshold 50);
 * `sanctioned` labels the counterparty so, scoring the wallet 90 and firing the alert once.
 */
async function walletWithScoreAlert() {
  const wallet = await track(t, token);
  const counterparty = randomAddress();
  const alertId = await createAlert(t, token, { walletId: wallet.walletId, condition: "risk_score_increase", threshold: 50 });
  await ingestTransactions(t, token, [tx({ from: wallet.address, to: counterparty, amount: 1, blockTime: now })]);
  await settled(t);
  const label = async (category: "sanctioned" | "exchange") => {
    await put({ labels: [{ address: counterparty, category, score: category === "sanctioned" ? 100 : 10 }] });
    await settled(t);
  };
  const patch = (status: string) =>
    t.app.inject({ method: "PATCH", url: `/v1/risk/alerts/${alertId}`, headers: bearer(token), payload: { status } });
  const baseline = async () =>
    (await t.deps.sql<{ baseline: number }[]>`select baseline_score as baseline from alerts where id = ${alertId}`)[0]!.baseline;
  return { wallet, counterparty, alertId, label, patch, baseline };
}

describe("PUT /v1/risk/labels effects", () => {
  it("takes back a label as GET answers it, with source null", async () => {
    const address = randomAddress();
    expect((await put({ labels: [{ address, category: "mixer", score: 70 }] })).statusCode).toBe(200);
    const read = await t.app.inject({ method: "GET", url: `/v1/risk/labels/${address}`, headers: bearer(token) });
    expect(read.json()).toMatchObject({ address, source: null });
    const { address: same, category, score, source } = read.json() as Record<string, unknown>;
    const again = await put({ labels: [{ address: same, category, score, source }] });
    expect(again.statusCode, again.body).toBe(200);
    // One label, stored with source '' (what the API calls null), not a second one beside it.
    const rows = await t.deps.sql`select source from risk_labels where address = ${address}`;
    expect(rows).toEqual([{ source: "" }]);
    expect((await t.app.inject({ method: "GET", url: `/v1/risk/labels/${address}`, headers: bearer(token) })).json()).toMatchObject({
      source: null,
      labels: [{ source: null }],
    });
  });

  it("creates and replaces labels, one per address and source, each recording the caller that wrote it", async () => {
    const [a, b] = [randomAddress(), randomAddress()];
    const first = await put({ labels: [{ address: a, category: "exchange", score: 5, source: "vendor-x" }, { address: b, category: "scam", score: 80 }] });
    expect(first.statusCode).toBe(200);
    expect(first.json()).toEqual({ upserted: 2, changed: 2, loadId: expect.stringMatching(/^lld_/) });
    // Another source's label of `a` is a second label; the same source's replaces the first.
    expect((await put({ labels: [{ address: a, category: "hack", score: 90 }] })).json()).toEqual({ upserted: 1, changed: 1, loadId: expect.stringMatching(/^lld_/) });
    const other = await t.token("loader-2", "risk:write");
    expect((await put({ labels: [{ address: a, category: "exchange", score: 20, source: "vendor-x" }] }, other)).json()).toEqual({ upserted: 1, changed: 1, loadId: expect.stringMatching(/^lld_/) });
    const rows = await t.deps.sql<{ address: string; category: string; score: number; source: string; updatedBy: string }[]>`
      select address, category, score, source, updated_by as "updatedBy" from risk_labels where address in (${a}, ${b}) order by score`;
    expect(rows).toEqual([
      { address: a, category: "exchange", score: 20, source: "vendor-x", updatedBy: "loader-2" },
      { address: b, category: "scam", score: 80, source: "", updatedBy: "operator" },
      { address: a, category: "hack", score: 90, source: "", updatedBy: "operator" },
    ]);
  });

  it("accepts one address under two sources in a request, and refuses it twice under the same source (null and absent are the same)", async () => {
    const address = randomAddress();
    const twoSources = await put({
      labels: [
        { address, category: "sanctioned", score: 100, source: "ofac-sdn" },
        { address, category: "mixer", score: 80, source: "vendor-x" },
        { address, category: "flagged", score: 50 },
      ],
    });
    expect(twoSources.json()).toEqual({ upserted: 3, changed: 3, loadId: expect.stringMatching(/^lld_/) });
    const body = expectProblem(
      await put({ labels: [{ address, category: "scam", score: 50, source: null }, { address, category: "mixer", score: 60 }] }),
      400,
      "validation_failed",
    );
    expect(errorPaths(body)).toContain("body.labels.1.address");
  });

  it("rescores the wallets that dealt with a relabelled address and fires their risk_score_increase alerts", async () => {
    const wallet = await track(t, token);
    const counterparty = randomAddress();
    const alertId = await createAlert(t, token, { walletId: wallet.walletId, condition: "risk_score_increase", threshold: 50 });
    await ingestTransactions(t, token, [tx({ from: wallet.address, to: counterparty, amount: 1, blockTime: now })]);
    await settled(t);

    const sanctioning = await put({ labels: [{ address: counterparty, category: "sanctioned", score: 100, source: "ofac" }] });
    expect(sanctioning.statusCode).toBe(200);
    await settled(t);
    const [state] = await t.deps.sql<{ score: number; factors: string[] }[]>`
      select risk_score as score, risk_factors as factors from address_state where address = ${wallet.address}`;
    expect(state).toEqual({ score: 90, factors: ["sanctioned_counterparty"] });
    const history = await t.deps.sql<{ previous: number; score: number; cause: string; evaluated: boolean }[]>`
      select previous_score as previous, score, cause, evaluated_at is not null as evaluated
      from risk_score_history where address = ${wallet.address} order by id`;
    // The change names the load that caused it: its label_changes rows say what changed, by whom.
    expect(history).toEqual([{ previous: 0, score: 90, cause: `labels:${sanctioning.json<{ loadId: string }>().loadId}`, evaluated: true }]);
    const events = await eventsOf(t, alertId);
    expect(events).toMatchObject([{ condition: "risk_score_increase", observed: 90, suppressed: false }]);

    // The same labels again change nothing: no history, no event.
    expect((await put({ labels: [{ address: counterparty, category: "sanctioned", score: 100, source: "ofac" }] })).json()).toEqual({ upserted: 1, changed: 0, loadId: expect.stringMatching(/^lld_/) });
    await settled(t);
    expect(await eventsOf(t, alertId)).toHaveLength(1);

    // A downgraded label (the same list's) takes the exposure away, and the baseline falls with the score.
    await put({ labels: [{ address: counterparty, category: "exchange", score: 10, source: "ofac" }] });
    await settled(t);
    const [after] = await t.deps.sql<{ score: number; factors: string[] }[]>`
      select risk_score as score, risk_factors as factors from address_state where address = ${wallet.address}`;
    expect(after).toEqual({ score: 0, factors: [] });
    const [alert] = await t.deps.sql<{ baseline: number }[]>`select baseline_score as baseline from alerts where id = ${alertId}`;
    expect(alert!.baseline).toBe(0);
    expect(await eventsOf(t, alertId)).toHaveLength(1);
    // Relabelled sanctioned again: back to 90, a rise of 90 from the cleared score, paged again.
    await put({ labels: [{ address: counterparty, category: "sanctioned", score: 100 }] });
    await settled(t);
    expect(await eventsOf(t, alertId)).toMatchObject([
      { condition: "risk_score_increase", observed: 90 },
      { condition: "risk_score_increase", observed: 90 },
    ]);
  });

  it("resumes a risk_score_increase alert from a fall that an evaluation is still committing, not from the score before it", async () => {
    const { wallet, label, patch, baseline } = await walletWithScoreAlert();
    await label("sanctioned");
    expect((await patch("paused")).statusCode).toBe(200);

    // An evaluation's fall to 0, written and not yet committed: it found the alert paused.
    const release = await holdTransaction(t.deps.sql, (held) => held`update address_state set risk_score = 0 where address = ${wallet.address}`);
    const resuming = patch("active");
    await waitForALockWait(t.deps.sql, "the resume to wait for the score being written");
    await release();
    expect((await resuming).statusCode).toBe(200);
    expect(await baseline()).toBe(0);
  });

  it("pages a wallet exposed again after its exposure was cleared while its risk_score_increase alert was paused", async () => {
    const { alertId, label, patch, baseline } = await walletWithScoreAlert();
    await label("sanctioned");
    expect(await eventsOf(t, alertId)).toHaveLength(1);

    expect((await patch("paused")).statusCode).toBe(200);
    await label("exchange");
    // Paused, the alert watched no change: its baseline is where it fired, until it is resumed.
    expect(await baseline()).toBe(90);
    expect((await patch("active")).statusCode).toBe(200);
    expect(await baseline()).toBe(0);

    await label("sanctioned");
    expect(await eventsOf(t, alertId)).toMatchObject([
      { condition: "risk_score_increase", observed: 90 },
      { condition: "risk_score_increase", observed: 90 },
    ]);
  });
});
