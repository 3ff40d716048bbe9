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
  /** Per event, its minute after event 0's (absent: event k at minute k). */
  minutes?: number[];
  /** Per event, the 7-day count before its own hour (absent: 0, the floor). */
  baselineAt?: number[];
  /** The 7-day count before the newest hour after the batch (absent: 0). */
  previous7DaysCount?: number;
  /** The 7-day count before the hour of the newest minute before the batch (absent: 0 when that minute is known). */
  previous7DaysBefore?: number | null;
};

const FIRST_MINUTE = 1_717_502_400 / 60;

function evaluate(step: Step, alerts: ActiveAlertRow[], evaluatedAt?: number) {
  const minuteOf = (event: number) => step.minutes?.[event] ?? event;
  const txs = step.eventOfRow.map((event, row) =>
    tx({ signature: `sig${event}`, leg: row, blockTime: FIRST_MINUTE * 60 + minuteOf(event) * 60, from: WALLET, to: OTHER }),
  );
  const sides: AddressSides = {
    events: { address: WALLET, needWindows: true, events: [] },
    txIndexes: txs.map((_, row) => row),
    eventIndexes: step.eventOfRow,
  };
  const newestMinuteBefore = step.newestMinuteBefore == null ? null : FIRST_MINUTE + step.newestMinuteBefore;
  const activity: AddressActivity = {
    transactionsLastHour: step.newest?.[1] ?? step.countAfter.at(-1)!,
    previous7DaysCount: step.previous7DaysCount ?? 0,
    transactions24h: 0,
    failed24h: 0,
    solOutflow24h: 0,
    newCounterpartiesLastHour: 0,
    dormantGapSeconds: null,
    transactionsLastHourBefore: step.newest?.[0] ?? null,
    countAfter: step.countAfter,
    previous7DaysAt: step.baselineAt ?? step.countAfter.map(() => 0),
    newestMinuteBefore,
    previous7DaysBefore: step.previous7DaysBefore !== undefined ? step.previous7DaysBefore : newestMinuteBefore === null ? null : 0,
  };
  return evaluateTransactions(txs, groupByAddress(alerts), {
    sides: new Map([[WALLET, sides]]),
    activity: new Map([[WALLET, activity]]),
    counterparty: () => counterparty(),
    evaluatedAt,
  });
}

function firings(step: Step, alerts: ActiveAlertRow[]) {
  return evaluate(step, alerts).map(({ firing, transaction }) => ({ alert: firing.alertId, row: transaction.leg, key: firing.dedupeKey, observed: firing.observed }));
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

  // 672 transactions in the 7 days before hour h (4 an hour): limit 20; none before hour h+1
  // (that busy hour has left the baseline): limit 5. Event 0 is at h+1:00, minute −1 is h:59.
  it.each([
    {
      case: "fires on the first transaction of the next hour, whose limit fell below the burst (10 at h:59 under 20, 11 at h+1:00 over 5)",
      step: { eventOfRow: [0], countAfter: [11], newest: [10, 11], newestMinuteBefore: -1, previous7DaysBefore: 672 },
      fired: [{ alert: "alr_5", row: 0, key: "sig0", observed: 11 }],
    },
    {
      case: "fires on the batch's first transaction past the boundary when the batch spans it",
      step: { eventOfRow: [0, 1, 2], minutes: [-2, -1, 0], countAfter: [9, 10, 11], baselineAt: [672, 672, 0], newest: [8, 11], newestMinuteBefore: -3, previous7DaysBefore: 672 },
      fired: [{ alert: "alr_5", row: 2, key: "sig2", observed: 11 }],
    },
    {
      case: "fires nothing on the next transaction of a burst reported under the lower limit",
      step: { eventOfRow: [0], minutes: [1], countAfter: [12], newest: [11, 12], newestMinuteBefore: 0, previous7DaysBefore: 0 },
      fired: [],
    },
    {
      case: "fires nothing as before when the newest minute's own baseline is not known (an answer stored by an older version)",
      step: { eventOfRow: [0], countAfter: [11], newest: [10, 11], newestMinuteBefore: -1, previous7DaysBefore: null },
      fired: [],
    },
    {
      case: "fires by the newest minute when a late transaction completes the hour there after the limit fell (h:59 held 10 under 20)",
      step: { eventOfRow: [0], minutes: [-30], countAfter: [3], baselineAt: [672], newest: [10, 11], newestMinuteBefore: 1, previous7DaysBefore: 672 },
      fired: [{ alert: "alr_5", row: 0, key: "sig0", observed: 11 }],
    },
    {
      case: "judges the newest transaction against the newest minute before the batch, not a late one of the batch below the limit",
      step: { eventOfRow: [0, 1], minutes: [0, 31], countAfter: [1, 6], newest: [5, 6], newestMinuteBefore: 30 },
      fired: [],
    },
    {
      case: "fires when the count reaches a limit that rose at the boundary (a burst over 5 in hour h, 20 in hour h+1)",
      step: { eventOfRow: [0], countAfter: [20], baselineAt: [672], previous7DaysCount: 672, newest: [19, 20], newestMinuteBefore: -1, previous7DaysBefore: 0 },
      fired: [{ alert: "alr_5", row: 0, key: "sig0", observed: 5 }],
    },
    {
      case: "fires nothing under a limit that rose at the boundary",
      step: { eventOfRow: [0], countAfter: [7], baselineAt: [672], previous7DaysCount: 672, newest: [6, 7], newestMinuteBefore: -1, previous7DaysBefore: 0 },
      fired: [],
    },
  ])("$case", ({ step, fired }) => {
    expect(firings(step as Step, [alert("alr_5", 5)])).toEqual(fired);
  });

  it("names the wallet's newest minute as the end of the hour when it fires on a late transaction", () => {
    // Sends at 04:00, 04:01, 04:02 and 04:04, then a late 04:03: the hour to 04:04 holds 5, the hour to 04:03 held 4.
    const step: Step = { eventOfRow: [0], minutes: [3], countAfter: [4], newest: [4, 5], newestMinuteBefore: 4 };
    const found = evaluate(step, [alert("alr_5", 5)], FIRST_MINUTE * 60 + 3_600);
    const hourTo = new Date((FIRST_MINUTE + 4) * 60_000).toISOString().slice(11, 16);
    expect(found.map(({ firing }) => [firing.dedupeKey, firing.reason])).toEqual([
      ["sig0", `5 transactions in the hour to ${hourTo} UTC, 5× the floor of 1 per hour (no earlier activity, threshold 5×).`],
    ]);
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
