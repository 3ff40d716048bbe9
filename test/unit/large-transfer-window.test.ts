// large_transfer with windowSeconds (domain/conditions/large-transfer-window.ts): the wallet's
// sends of the alert's token summed over the trailing window, firing where the sum reaches the
// threshold from below. Judged as the pipeline judges them: every transaction of the wallet in
// chain order, against the stored sends (pipeline/send-windows.ts).
import { describe, expect, it } from "vitest";
import { evaluateTransaction, type AlertRule, type Firing } from "../../src/domain/conditions/index.ts";
import { windowShown } from "../../src/domain/conditions/large-transfer-window.ts";
import { WRAPPED_SOL_MINT } from "../../src/domain/tokens.ts";
import type { Transaction } from "../../src/domain/types.ts";
import { trailingSendsLookup } from "../../src/pipeline/send-windows.ts";
import { MINTS, randomAddress } from "../helpers/chain.ts";
import { makeTransaction } from "../helpers/seed.ts";

const WALLET = randomAddress();
const START = 1_795_000_000;

const rule = (overrides: Partial<AlertRule> = {}): AlertRule => ({
  alertId: "alr_window",
  walletId: "wal_1",
  address: WALLET,
  condition: "large_transfer",
  threshold: 10_000,
  token: "SOL",
  baselineScore: null,
  windowSeconds: 3600,
  ...overrides,
});

/** One part: seconds after START, amount, and whatever else differs from a successful SOL send to a fresh address. */
type Part = { at: number; amount: number } & Partial<Transaction>;

const send = (part: Part, k: number): Transaction =>
  makeTransaction({ from: WALLET, to: randomAddress(), slot: 300_000_000 + part.at, signature: `sig${String(k).padStart(4, "0")}`, blockTime: START + part.at, ...part });

/** Every part judged in chain order against all of them stored: each firing with the index of its part. */
function judge(parts: readonly Part[], alert: AlertRule = rule()): Array<{ part: number; firing: Firing }> {
  const txs = parts.map(send);
  const stored = [...txs].sort((a, b) => a.blockTime - b.blockTime || a.slot - b.slot || (a.signature < b.signature ? -1 : 1));
  const context = { counterparty: null, activity: null, trailingSends: trailingSendsLookup(new Map([[WALLET, stored]])) };
  return stored.flatMap((tx) => evaluateTransaction([alert], tx, context).map((firing) => ({ part: txs.indexOf(tx), firing })));
}

const fired = (parts: readonly Part[], alert?: AlertRule) => judge(parts, alert).map(({ part, firing }) => [part, firing.observed]);

/**
 * The parts delivered in batches, each evaluated in turn as the pipeline does: against every
 * part stored so far, those of the batches before judged. Each firing as [batch, part in it, observed].
 */
function firedInTurns(batches: ReadonlyArray<readonly Part[]>, alert: AlertRule = rule()): Array<[number, number, number]> {
  const made = batches.map((parts, b) => parts.map((part, k) => send(part, 100 * b + k)));
  const found: Array<[number, number, number]> = [];
  made.forEach((txs, b) => {
    const stored = made
      .slice(0, b + 1)
      .flatMap((batch, a) => batch.map((tx) => ({ ...tx, judged: a < b })))
      .sort((x, y) => x.blockTime - y.blockTime || x.slot - y.slot || (x.signature < y.signature ? -1 : 1));
    const lookup = trailingSendsLookup(new Map([[WALLET, stored]]), new Set(txs.map((tx) => tx.signature)));
    const inChainOrder = [...txs].sort((x, y) => x.blockTime - y.blockTime || x.slot - y.slot);
    for (const tx of inChainOrder) {
      for (const firing of evaluateTransaction([alert], tx, { counterparty: null, activity: null, trailingSends: lookup })) {
        found.push([b, txs.indexOf(tx), firing.observed]);
      }
    }
  });
  return found;
}

/** `count` sends of `amount`, one a minute from `from` seconds. */
const everyMinute = (count: number, amount: number, from = 0): Part[] => Array.from({ length: count }, (_, k) => ({ at: from + 60 * k, amount }));

describe("large_transfer with windowSeconds: the trailing sum of the wallet's sends", () => {
  it.each([
    ["reaches the threshold exactly", 10_000, [...everyMinute(9, 1_000), { at: 540, amount: 1_000 }], [[9, 10_000]]],
    ["stays just below it", 10_000, [...everyMinute(9, 1_000), { at: 540, amount: 999.999999 }], []],
    ["passes just above it", 10_000, [...everyMinute(9, 1_000), { at: 540, amount: 1_000.000001 }], [[9, 10_000.000001]]],
    // 0.1 + 0.7 is 0.7999999999999999 in doubles: summed exactly, it reaches 0.8.
    ["reaches it exactly where doubles fall short", 0.8, [{ at: 0, amount: 0.1 }, { at: 60, amount: 0.7 }], [[1, 0.8]]],
  ] as const)("fires on the send where the sum %s (and only there)", (_name, threshold, parts, expected) => {
    expect(fired(parts, rule({ threshold }))).toEqual(expected);
  });

  it("counts the parts inside (t − windowSeconds, t] only: a part exactly windowSeconds before is out, one a second later is in", () => {
    expect(fired([{ at: 0, amount: 6_000 }, { at: 3_600, amount: 4_000 }])).toEqual([]);
    expect(fired([{ at: 1, amount: 6_000 }, { at: 3_600, amount: 4_000 }])).toEqual([[1, 10_000]]);
    // Parts summing across the window's edge: the oldest leaves as the newest comes.
    expect(fired([{ at: 0, amount: 5_000 }, { at: 1_800, amount: 4_000 }, { at: 3_700, amount: 1_000 }, { at: 3_800, amount: 5_000 }])).toEqual([[3, 10_000]]);
  });

  it("does not fire again while the sum stays at or above the threshold", () => {
    expect(fired(everyMinute(15, 1_000))).toEqual([[9, 10_000]]);
  });

  it("fires again once the sum has fallen below the threshold and reaches it again", () => {
    const parts = [{ at: 0, amount: 5_000 }, { at: 600, amount: 5_000 }, { at: 4_300, amount: 5_000 }, { at: 4_400, amount: 5_000 }];
    expect(fired(parts)).toEqual([[1, 10_000], [3, 10_000]]);
  });

  it("fires on a single send at or above the threshold, as without a window, also while the sum is above it", () => {
    expect(fired([{ at: 0, amount: 10_000 }])).toEqual([[0, 10_000]]);
    expect(fired([...everyMinute(10, 1_000), { at: 600, amount: 12_000 }])).toEqual([[9, 10_000], [10, 22_000]]);
  });

  it("does not count a failed send, a self-transfer, nor another token", () => {
    const nine = everyMinute(9, 1_000);
    const ignored: Part[] = [
      { at: 540, amount: 1_000, status: "failed" },
      { at: 541, amount: 1_000, to: WALLET },
      { at: 542, amount: 5_000, token: "USDC", mint: MINTS.USDC },
    ];
    expect(fired([...nine, ...ignored])).toEqual([]);
    expect(fired([...nine, ...ignored, { at: 600, amount: 1_000 }])).toEqual([[12, 10_000]]);
  });

  it("counts wrapped SOL as SOL, and a transaction's native and wrapped legs of the same SOL once", () => {
    expect(fired([...everyMinute(9, 1_000), { at: 540, amount: 1_000, token: "WSOL", mint: WRAPPED_SOL_MINT }])).toEqual([[9, 10_000]]);
    // A swap from SOL: 1,000 SOL wrapped, then 1,000 wrapped SOL sent: the same SOL, counted once.
    const swap: Part[] = [
      { at: 540, amount: 1_000, type: "swap", signature: "swap", leg: 0 },
      { at: 540, amount: 1_000, type: "swap", signature: "swap", leg: 1, token: "WSOL", mint: WRAPPED_SOL_MINT },
    ];
    expect(fired([...everyMinute(8, 1_000), ...swap])).toEqual([]);
    expect(fired([...everyMinute(9, 1_000), ...swap]).map(([part]) => part)).toEqual([9, 10]);
  });

  it("judges receipts per transaction: a received transfer at or above the threshold fires, smaller ones are not summed", () => {
    const from = randomAddress();
    const received = (at: number, amount: number): Part => ({ at, amount, from, to: WALLET });
    expect(fired([received(0, 6_000), received(60, 6_000)])).toEqual([]);
    expect(fired([received(0, 10_000)])).toEqual([[0, 10_000]]);
    // Nor are they counted with the sends.
    expect(fired([...everyMinute(9, 1_000), received(540, 1_000)])).toEqual([]);
  });

  it("fires once for a drain whose last part was delivered first: the late parts are judged at the newest judged send within their reach", () => {
    const drain = everyMinute(15, 700);
    const found = firedInTurns([[drain[14]!], drain.slice(0, 14)]);
    expect(found).toEqual([[1, 13, 10_500]]);
    // Judged at their own block times only, none of the 14 reached the threshold: 9,800 at the 14th.
    expect(firedInTurns([drain.slice(0, 14)])).toEqual([]);
  });

  it("fires what one evaluation of every part fires when the parts arrive in block-time order, batch by batch", () => {
    const drain = everyMinute(15, 700);
    expect(firedInTurns([drain.slice(0, 5), drain.slice(5, 10), drain.slice(10)])).toEqual([[2, 4, 10_500]]);
    expect(fired(drain)).toEqual([[14, 10_500]]);
  });

  it("does not fire for a late part while the sum at the newest judged send is at or above the threshold already", () => {
    expect(firedInTurns([everyMinute(10, 1_000), [{ at: 150, amount: 500 }]])).toEqual([[0, 9, 10_000]]);
  });

  it("judges a late part at its own block time alone when no judged send is within its reach", () => {
    expect(firedInTurns([[{ at: 3_600, amount: 9_500 }], [{ at: 0, amount: 600 }]])).toEqual([]);
    expect(firedInTurns([[{ at: 3_599, amount: 9_500 }], [{ at: 0, amount: 600 }]])).toEqual([[1, 0, 10_100]]);
  });

  it("sums nothing without windowSeconds: each transaction alone, as before", () => {
    expect(fired(everyMinute(15, 1_000), rule({ windowSeconds: null }))).toEqual([]);
  });

  it("says the sum, the sends and the window in the reason and the facts; observed is the sum", () => {
    const [only, ...more] = judge(everyMinute(15, 700));
    expect(more).toEqual([]);
    expect(only!.part).toBe(14);
    expect(only!.firing).toMatchObject({
      observed: 10_500,
      dedupeKey: "sig0014",
      transactionSignature: "sig0014",
      reason: "Sent 10,500 SOL in 15 transfers within 1 hour (threshold 10,000).",
      facts: { window: { seconds: 3600, transfers: 15 } },
    });
  });

  it.each([
    [3600, "1 hour"],
    [86_400, "24 hours"],
    [900, "15 minutes"],
    [5400, "90 minutes"],
    [90, "90 seconds"],
    [60, "1 minute"],
  ])("names a window of %i seconds %j", (seconds, shown) => {
    expect(windowShown(seconds)).toBe(shown);
  });
});
