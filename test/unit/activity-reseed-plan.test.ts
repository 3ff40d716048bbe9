import { describe, expect, it } from "vitest";
import type { BatchTransaction } from "../../src/db/queries/pipeline.ts";
import { remainingTtl, replayGroups, replaySteps, reseedWindows } from "../../src/pipeline/activity-reseed-plan.ts";

const DAY = 86_400_000;

const leg = (batchId: string, from: string, to: string, blockTime: number): BatchTransaction => ({
  signature: `${batchId}-${from}-${to}-${blockTime}`,
  type: "transfer",
  amount: 1,
  token: "SOL",
  from,
  to,
  blockTime,
  slot: 1,
  fee: 0,
  status: "success",
  batchId,
});

describe("the reseed's plan", () => {
  it("replays 8 days, reads counterparties from 100 days and sends from 3 years back", () => {
    const now = new Date("2026-11-27T12:00:00Z");
    expect(reseedWindows(now)).toEqual({
      replayFrom: new Date(now.getTime() - 8 * DAY),
      counterpartiesFrom: new Date(now.getTime() - 100 * DAY),
      lastSendsFrom: new Date(now.getTime() - 3 * 365 * DAY),
    });
  });

  it("cuts the batches into groups that end once they reach the transaction count, in order", () => {
    const batches = [5, 3, 4, 10, 1].map((transactionCount, k) => ({ id: `b${k}`, transactionCount }));
    expect(replayGroups(batches, 8).map((group) => group.map((batch) => batch.id))).toEqual([["b0", "b1"], ["b2", "b3"], ["b4"]]);
    expect(replayGroups([], 8)).toEqual([]);
  });

  it("counts the tracked addresses in every batch, however long before their tracking it was evaluated, batch by batch", () => {
    const tracked = new Set(["early", "late"]);
    const batches = [
      { id: "b1", transactionCount: 1, evaluatedAt: new Date(DAY) },
      { id: "b2", transactionCount: 1, evaluatedAt: new Date(3 * DAY) },
    ];
    const txs = [leg("b1", "early", "late", 100), leg("b2", "late", "early", 200), leg("b2", "stranger", "other", 201)];
    const steps = replaySteps(batches, txs, tracked);
    expect(steps.map((step) => step.map((input) => input.address))).toEqual([["early", "late"], ["late", "early"]]);
    expect(steps[1]![0]!.events).toMatchObject([{ batchId: "b2", blockTime: 200, sent: true, sentTo: ["early"] }]);
    // Answers are thrown away: no per-event windows are asked for.
    expect(steps.flat().every((input) => !input.needWindows)).toBe(true);
  });

  it("keeps what is left of a key's expiry from when its address was last counted, and none once it would have expired", () => {
    expect(remainingTtl(1_000, 500, 1_200)).toBe(300);
    expect(remainingTtl(1_000, 500, 1_600)).toBe(0);
    // A time ahead of the clock (another host's) keeps the whole expiry, never more.
    expect(remainingTtl(2_000, 500, 1_000)).toBe(500);
  });
});
