// unusual_activity's second judgment, at the wallet's newest minute for a batch as a whole
// (src/pipeline/transaction-firings.ts): a transaction delivered after a newer one is judged
// at its own minute, where the newer one is not counted, so two deliveries out of order could
// carry a burst over the limit with neither transaction crossing it.
import { describe, expect, it } from "vitest";
import type { ActiveAlertRow } from "../../../src/db/queries/pipeline.ts";
import type { AddressActivity } from "../../../src/pipeline/activity.ts";
import type { AddressSides } from "../../../src/pipeline/batch-facts.ts";
import { evaluateTransactions, groupByAddress } from "../../../src/pipeline/transaction-firings.ts";
import { OTHER, WALLET, counterparty, rule, tx } from "./fixtures.ts";

const alert = (alertId: string, threshold: number): ActiveAlertRow => ({
  ...rule("unusual_activity", { alertId, threshold }),
  alias: null,
  channel: "webhook",
  webhookUrl: "http://127.0.0.1:9/hook",
  recipient: null,
});

type Step = {
  /** Per transaction row of the batch (all the wallet's): the event it belongs to (legs share one). */
  eventOfRow: number[];
  /** Per event: the trailing hour at its own minute, itself included. */
  countAfter: number[];
  /** The trailing hour at the newest minute before the batch and after it; null: not counted. */
  newest: [number, number] | null;
  /** The newest minute before the batch, in minutes after event 0's (null or absent: not known). */
  newestMinuteBefore?: number | null;
};

const FIRST_MINUTE = 1_717_502_400 / 60;

function firings(step: Step, alerts: ActiveAlertRow[]) {
  const txs = step.eventOfRow.map((event, row) => tx({ signature: `sig${event}`, leg: row, blockTime: 1_717_502_400 + event * 60, from: WALLET, to: OTHER }));
  const sides: AddressSides = {
    events: { address: WALLET, needWindows: true, events: [] },
    txIndexes: txs.map((_, row) => row),
    eventIndexes: step.eventOfRow,
  };
  const activity: AddressActivity = {
    transactionsLastHour: step.newest?.[1] ?? step.countAfter.at(-1)!,
    previous7DaysCount: 0,
    transactions24h: 0,
    failed24h: 0,
    solOutflow24h: 0,
    newCounterpartiesLastHour: 0,
    dormantGapSeconds: null,
    transactionsLastHourBefore: step.newest?.[0] ?? null,
    countAfter: step.countAfter,
    previous7DaysAt: step.countAfter.map(() => 0),
    newestMinuteBefore: step.newestMinuteBefore == null ? null : FIRST_MINUTE + step.newestMinuteBefore,
  };
  return evaluateTransactions(txs, groupByAddress(alerts), {
    sides: new Map([[WALLET, sides]]),
    activity: new Map([[WALLET, activity]]),
    counterparty: () => counterparty(),
  }).map(({ firing, transaction }) => ({ alert: firing.alertId, row: transaction.leg, key: firing.dedupeKey, observed: firing.observed }));
}

describe("unusual_activity judged at the wallet's newest minute (threshold 5 on a quiet wallet: limit 5)", () => {
  it.each([
    {
      case: "fires on the late transaction whose batch takes the newest minute's hour from 4 to 5 (the reviewer's third delivery)",
      step: { eventOfRow: [0], countAfter: [4], newest: [4, 5] },
      fired: [{ alert: "alr_5", row: 0, key: "sig0", observed: 5 }],
    },
    {
      case: "fires nothing for a batch that finds the newest minute's hour at the limit already (the fourth delivery)",
      step: { eventOfRow: [0, 1, 2], countAfter: [6, 7, 8], newest: [5, 8] },
      fired: [],
    },
    {
      case: "fires once, on the crossing transaction, when both judgments cross in one batch (in time order)",
      step: { eventOfRow: [0, 1, 2, 3, 4, 5], countAfter: [1, 2, 3, 4, 5, 6], newest: [0, 6] },
      fired: [{ alert: "alr_5", row: 4, key: "sig4", observed: 5 }],
    },
    {
      case: "fires on the first leg of the batch's newest transaction",
      step: { eventOfRow: [0, 1, 1], countAfter: [3, 4], newest: [4, 5] },
      fired: [{ alert: "alr_5", row: 1, key: "sig1", observed: 5 }],
    },
    {
      case: "fires nothing when the newest minute's hour stays below the limit",
      step: { eventOfRow: [0], countAfter: [2], newest: [3, 4] },
      fired: [],
    },
    {
      case: "fires nothing when the counts before the batch are unknown (no windows counted)",
      step: { eventOfRow: [0], countAfter: [4], newest: null },
      fired: [],
    },
  ])("$case", ({ step, fired }) => {
    expect(firings(step as Step, [alert("alr_5", 5)])).toEqual(fired);
  });

  it("fires an alert by the newest minute in a batch where another alert fired on its own transaction's minute", () => {
    // The late transaction reaches 4 at its own minute (threshold 4 crosses there), and 5 at the
    // newest minute (threshold 5 crosses there only); threshold 4 does not fire twice.
    const step: Step = { eventOfRow: [0], countAfter: [4], newest: [4, 5] };
    expect(firings(step, [alert("alr_4", 4), alert("alr_5", 5)])).toEqual([
      { alert: "alr_4", row: 0, key: "sig0", observed: 4 },
      { alert: "alr_5", row: 0, key: "sig0", observed: 5 },
    ]);
  });

  it.each([
    {
      case: "fires nothing on a late transaction crossing at its own minute while the newest minute's hour is over the limit already (one burst, one page)",
      step: { eventOfRow: [0], countAfter: [5], newest: [5, 6], newestMinuteBefore: 30 },
      fired: [],
    },
    {
      case: "fires nothing on one crossing at the newest minute itself, which is not newer than it",
      step: { eventOfRow: [0], countAfter: [5], newest: [5, 6], newestMinuteBefore: 0 },
      fired: [],
    },
    {
      case: "fires on a late transaction crossing at its own minute while the newest minute's hour is below the limit (a burst in the past)",
      step: { eventOfRow: [0], countAfter: [5], newest: [1, 2], newestMinuteBefore: 90 },
      fired: [{ alert: "alr_5", row: 0, key: "sig0", observed: 5 }],
    },
    {
      case: "fires on a transaction newer than the newest minute before the batch that crosses, whatever that minute's hour held",
      step: { eventOfRow: [0], countAfter: [5], newest: [5, 5], newestMinuteBefore: -10 },
      fired: [{ alert: "alr_5", row: 0, key: "sig0", observed: 5 }],
    },
    {
      case: "fires on a late transaction crossing at its own minute more than an hour before the newest minute, whatever that minute's hour held (a burst of its own)",
      step: { eventOfRow: [0], countAfter: [5], newest: [5, 5], newestMinuteBefore: 70 },
      fired: [{ alert: "alr_5", row: 0, key: "sig0", observed: 5 }],
    },
    {
      case: "fires nothing on one 59 minutes before the newest minute, inside its hour",
      step: { eventOfRow: [0], countAfter: [5], newest: [5, 6], newestMinuteBefore: 59 },
      fired: [],
    },
    {
      case: "fires on a late crossing as before when the newest minute is not known (an answer stored by an older version)",
      step: { eventOfRow: [0], countAfter: [5], newest: [5, 6], newestMinuteBefore: null },
      fired: [{ alert: "alr_5", row: 0, key: "sig0", observed: 5 }],
    },
  ])("$case", ({ step, fired }) => {
    expect(firings(step as Step, [alert("alr_5", 5)])).toEqual(fired);
  });

  it("leaves the other conditions to the per-transaction judgment", () => {
    const others = [
      { ...alert("alr_big", 10_000), condition: "large_transfer" as const },
      { ...alert("alr_cp", 75), condition: "suspicious_counterparty" as const },
    ];
    const step: Step = { eventOfRow: [0], countAfter: [4], newest: [4, 5] };
    expect(firings(step, others).map((f) => f.alert)).toEqual(["alr_big"]);
  });
});
