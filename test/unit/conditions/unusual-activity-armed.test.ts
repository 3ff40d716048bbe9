// An armed unusual_activity alert (created, resumed or given a new threshold, and not judged
// since): its first judgment fires on an hour at or over the limit, crossed or not, once for the
// burst in progress; after it, only crossings fire. evaluateArmedUnusualActivity is that
// judgment; evaluateTransactions (src/pipeline/transaction-firings.ts) asks it where the
// ordinary judgments fire nothing, in the first batch of a group that judges the alert.
import { describe, expect, it } from "vitest";
import type { ActiveAlertRow } from "../../../src/db/queries/pipeline.ts";
import { evaluateArmedUnusualActivity, evaluateUnusualActivity } from "../../../src/domain/conditions/index.ts";
import type { AddressActivity } from "../../../src/pipeline/activity.ts";
import type { AddressSides } from "../../../src/pipeline/batch-facts.ts";
import { evaluateTransactions, groupByAddress } from "../../../src/pipeline/transaction-firings.ts";
import { OTHER, THIRD, WALLET, counterparty, rule, tx } from "./fixtures.ts";

describe("evaluateArmedUnusualActivity (threshold 5 on a quiet wallet: limit 5)", () => {
  it.each([
    { countBefore: 3, countAfter: 4, newestBefore: undefined, fires: false, case: "below the limit" },
    { countBefore: 4, countAfter: 5, newestBefore: undefined, fires: true, case: "crossing the limit" },
    { countBefore: 8, countAfter: 9, newestBefore: undefined, fires: true, case: "over the limit already (the burst in progress)" },
    { countBefore: 8, countAfter: 9, newestBefore: { count: 9, previous7DaysCount: 0 }, fires: true, case: "late, with the newest minute's hour over the limit" },
  ])("$case ($countBefore → $countAfter) fires: $fires", ({ countBefore, countAfter, newestBefore, fires }) => {
    const window = { countBefore, countAfter, previous7DaysCount: 0, ...(newestBefore ? { newestBefore } : {}) };
    const firing = evaluateArmedUnusualActivity(rule("unusual_activity"), tx(), window);
    expect(firing !== null).toBe(fires);
    if (firing) expect(firing).toMatchObject({ observed: countAfter, dedupeKey: tx().signature });
  });

  it("reads as a crossing does: the same sentence and observed multiple", () => {
    const window = { countBefore: 4, countAfter: 5, previous7DaysCount: 0 };
    expect(evaluateArmedUnusualActivity(rule("unusual_activity"), tx(), window)).toEqual(evaluateUnusualActivity(rule("unusual_activity"), tx(), window));
  });

  it.each([
    { case: "a transaction the wallet is not on", rules: rule("unusual_activity"), transaction: tx({ from: OTHER, to: THIRD }) },
    { case: "another condition", rules: rule("large_transfer"), transaction: tx() },
    { case: "a threshold of 0", rules: rule("unusual_activity", { threshold: 0 }), transaction: tx() },
  ])("never fires for $case", ({ rules, transaction }) => {
    expect(evaluateArmedUnusualActivity(rules, transaction, { countBefore: 8, countAfter: 9, previous7DaysCount: 0 })).toBeNull();
  });
});

const alert = (alertId: string, threshold: number, activityArmed: boolean): ActiveAlertRow => ({
  ...rule("unusual_activity", { alertId, threshold }),
  activityArmed,
  alias: null,
  channel: "webhook",
  webhookUrl: "http://127.0.0.1:9/hook",
  recipient: null,
});

type Step = {
  /** Per event (one row each): the trailing hour at its own minute, itself included. */
  countAfter: number[];
  /** The trailing hour at the newest minute before the batch and after it. */
  newest: [number, number];
  /** The newest minute before the batch, in minutes after event 0's (absent: not late). */
  newestMinuteBefore?: number;
};

const FIRST_SECOND = 1_717_502_400;

function evaluate(step: Step, alerts: ActiveAlertRow[], armedJudged = new Set<string>()) {
  const txs = step.countAfter.map((_, event) => tx({ signature: `sig${event}`, blockTime: FIRST_SECOND + event * 60, from: WALLET, to: OTHER }));
  const sides: AddressSides = {
    events: { address: WALLET, needWindows: true, events: [] },
    txIndexes: txs.map((_, row) => row),
    eventIndexes: txs.map((_, row) => row),
  };
  const activity: AddressActivity = {
    transactionsLastHour: step.newest[1],
    previous7DaysCount: 0,
    transactions24h: 0,
    failed24h: 0,
    solOutflow24h: 0,
    newCounterpartiesLastHour: 0,
    dormantGapSeconds: null,
    transactionsLastHourBefore: step.newest[0],
    countAfter: step.countAfter,
    previous7DaysAt: step.countAfter.map(() => 0),
    newestMinuteBefore: step.newestMinuteBefore === undefined ? null : FIRST_SECOND / 60 + step.newestMinuteBefore,
    previous7DaysBefore: step.newestMinuteBefore === undefined ? null : 0,
  };
  return evaluateTransactions(txs, groupByAddress(alerts), {
    sides: new Map([[WALLET, sides]]),
    activity: new Map([[WALLET, activity]]),
    counterparty: () => counterparty(),
    armedJudged,
    evaluatedAt: FIRST_SECOND + 6 * 3_600,
  });
}

function firings(step: Step, alerts: ActiveAlertRow[], armedJudged = new Set<string>()) {
  return evaluate(step, alerts, armedJudged).map(({ firing, armed }) => ({
    alert: firing.alertId,
    key: firing.dedupeKey,
    observed: firing.observed,
    armed: armed !== undefined,
  }));
}

describe("an armed unusual_activity alert in a batch (limit 5)", () => {
  it.each([
    {
      case: "fires once, on the batch's first transaction, for a burst at 8 when lowered from 10 to 5",
      step: { countAfter: [9, 10], newest: [8, 10] },
      fired: [{ alert: "alr_5", key: "sig0", observed: 9, armed: true }],
    },
    {
      case: "fires on the crossing as any alert does when the batch crosses the limit",
      step: { countAfter: [4, 5, 6], newest: [3, 6] },
      fired: [{ alert: "alr_5", key: "sig1", observed: 5, armed: false }],
    },
    {
      case: "fires nothing while the hour stays below the limit",
      step: { countAfter: [2, 3], newest: [1, 3] },
      fired: [],
    },
    {
      case: "fires on the newest transaction when only the newest minute's hour is over the limit (a late transaction)",
      step: { countAfter: [2], newest: [8, 9], newestMinuteBefore: 30 },
      fired: [{ alert: "alr_5", key: "sig0", observed: 9, armed: true }],
    },
    {
      case: "fires on a late transaction crossing at its own minute inside a burst the alert never reported",
      step: { countAfter: [5], newest: [6, 7], newestMinuteBefore: 30 },
      fired: [{ alert: "alr_5", key: "sig0", observed: 5, armed: true }],
    },
  ])("$case", ({ step, fired }) => {
    expect(firings(step as Step, [alert("alr_5", 5, true)])).toEqual(fired);
  });

  it("names the hour it judged and its end: the transaction's own minute, or the wallet's newest minute for a late one", () => {
    const hhmm = (minute: number) => new Date((FIRST_SECOND + minute * 60) * 1000).toISOString().slice(11, 16);
    const own = evaluate({ countAfter: [9, 10], newest: [8, 10] }, [alert("alr_5", 5, true)]);
    expect(own.map(({ firing, armed }) => [firing.dedupeKey, armed, firing.reason])).toEqual([
      ["sig0", { hourTo: FIRST_SECOND }, `9 transactions in the hour to ${hhmm(0)} UTC, 9× the floor of 1 per hour (no earlier activity, threshold 5×).`],
    ]);
    // 8 sends at minutes 180–187, then a late one at minute 0 (the semantics review's t18): the
    // hour to minute 0 held 1; the 8 are in the hour to the wallet's newest minute, 187.
    const late = evaluate({ countAfter: [1], newest: [8, 8], newestMinuteBefore: 187 }, [alert("alr_5", 5, true)]);
    expect(late.map(({ firing, armed }) => [firing.dedupeKey, armed, firing.reason])).toEqual([
      ["sig0", { hourTo: FIRST_SECOND + 187 * 60 }, `8 transactions in the hour to ${hhmm(187)} UTC, 8× the floor of 1 per hour (no earlier activity, threshold 5×).`],
    ]);
  });

  it("fires nothing in a burst in progress for an alert that is not armed (it fired on the crossing, or judged the hour before)", () => {
    expect(firings({ countAfter: [9, 10], newest: [8, 10] }, [alert("alr_5", 5, false)])).toEqual([]);
  });

  it("spends the arming in the first batch that judges the alert, whether it fired or not", () => {
    const judged = new Set<string>();
    expect(firings({ countAfter: [2, 3], newest: [1, 3] }, [alert("alr_5", 5, true)], judged)).toEqual([]);
    expect(judged).toEqual(new Set(["alr_5"]));
    // The group's next batch finds the hour over the limit without crossing it: nothing more.
    expect(firings({ countAfter: [9], newest: [8, 9] }, [alert("alr_5", 5, true)], judged)).toEqual([]);
  });

  it("leaves an armed alert armed when the batch has no counts to judge it by", () => {
    const judged = new Set<string>();
    const txs = [tx({ signature: "sig0", from: WALLET, to: OTHER })];
    const found = evaluateTransactions(txs, groupByAddress([alert("alr_5", 5, true)]), {
      sides: new Map([[WALLET, { events: { address: WALLET, needWindows: true, events: [] }, txIndexes: [0], eventIndexes: [0] }]]),
      activity: new Map(),
      counterparty: () => counterparty(),
      armedJudged: judged,
    });
    expect(found).toEqual([]);
    expect(judged.size).toBe(0);
  });

  it("judges each armed alert by its own limit, and leaves the others edge-triggered", () => {
    const alerts = [alert("alr_5", 5, true), alert("alr_8", 8, true), alert("alr_9", 9, false), alert("alr_20", 20, true)];
    expect(firings({ countAfter: [9, 10], newest: [8, 10] }, alerts)).toEqual([
      { alert: "alr_5", key: "sig0", observed: 9, armed: true },
      { alert: "alr_8", key: "sig0", observed: 9, armed: true },
      { alert: "alr_9", key: "sig0", observed: 9, armed: false },
    ]);
  });
});
