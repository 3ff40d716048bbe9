// judgeScoreChange: one score change judged by one risk_score_increase alert, with the state it
// holds between changes (its baseline, and the newest change of its address when it was created
// or last resumed: the changes up to that one are in its baseline already, and not its own).
import { describe, expect, it } from "vitest";
import { judgeScoreChange, type ScoreAlertState, type ScoreChange } from "../../../src/domain/conditions/index.ts";
import { OTHER, WALLET, rule } from "./fixtures.ts";

const change = (id: number, previousScore: number, score: number, address = WALLET): ScoreChange => ({
  id,
  address,
  previousScore,
  score,
  factors: ["sanctioned_counterparty"],
});

describe("judgeScoreChange (threshold 10)", () => {
  it.each([
    {
      case: "a rise made before the alert was created (an evaluation a backlog held) is not the alert's",
      state: { baselineScore: 0, baselineChangeId: 7 },
      change: change(6, 0, 90),
      judged: null,
    },
    {
      case: "the change the alert was created at is not the alert's either",
      state: { baselineScore: 0, baselineChangeId: 7 },
      change: change(7, 90, 0),
      judged: null,
    },
    {
      case: "a rise made after fires and resets the baseline",
      state: { baselineScore: 0, baselineChangeId: 7 },
      change: change(8, 0, 90),
      judged: { observed: 90, baselineScore: 90 },
    },
    {
      case: "a rise below the threshold keeps the baseline",
      state: { baselineScore: 20, baselineChangeId: 7 },
      change: change(8, 20, 29),
      judged: { observed: null, baselineScore: 20 },
    },
    {
      case: "a fall lowers the baseline",
      state: { baselineScore: 90, baselineChangeId: 0 },
      change: change(8, 90, 0),
      judged: { observed: null, baselineScore: 0 },
    },
    {
      case: "a rise measured from a baseline a fall lowered fires (cleared, then exposed again)",
      state: { baselineScore: 0, baselineChangeId: 0 },
      change: change(9, 0, 90),
      judged: { observed: 90, baselineScore: 90 },
    },
    {
      case: "an alert older than the mark (0) judges every change",
      state: { baselineScore: 0, baselineChangeId: 0 },
      change: change(1, 0, 90),
      judged: { observed: 90, baselineScore: 90 },
    },
    {
      case: "an alert without a baseline starts from the change it meets",
      state: { baselineScore: null, baselineChangeId: 0 },
      change: change(3, 25, 34),
      judged: { observed: null, baselineScore: 34 },
    },
    {
      case: "a change of another address is not the alert's",
      state: { baselineScore: 0, baselineChangeId: 0 },
      change: change(8, 0, 90, OTHER),
      judged: null,
    },
  ])("$case", ({ state, change: judgedChange, judged }) => {
    const result = judgeScoreChange(rule("risk_score_increase"), state as ScoreAlertState, judgedChange);
    expect(result === null ? null : { observed: result.firing?.observed ?? null, baselineScore: result.baselineScore }).toEqual(judged);
  });

  it("takes an address's changes one after the other: made and taken back before the alert, then a rise after it", () => {
    // Labelled sanctioned and unlabelled during a backlog (changes 6 and 7), the alert created
    // at score 0 after them, then a real exposure (change 8): only that one fires.
    let state: ScoreAlertState = { baselineScore: 0, baselineChangeId: 7 };
    const fired: number[] = [];
    for (const next of [change(6, 0, 90), change(7, 90, 0), change(8, 0, 90)]) {
      const judged = judgeScoreChange(rule("risk_score_increase"), state, next);
      if (judged === null) continue;
      if (judged.firing) fired.push(next.id);
      state = { ...state, baselineScore: judged.baselineScore };
    }
    expect(fired).toEqual([8]);
    expect(state.baselineScore).toBe(90);
  });
});
