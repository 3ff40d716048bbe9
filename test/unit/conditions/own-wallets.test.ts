// large_transfer with ignoreOwnWallets (domain/conditions/own-wallets.ts): a leg whose other side
// is a wallet the alert's owner also tracks is not judged, nor counted in the totals and windowed
// sums of the wallet's other legs. A desk's daily hot→cold sweep paged large_transfer on both
// wallets every day (noise review, finding 5).
import { describe, expect, it } from "vitest";
import type { ActiveAlertRow } from "../../../src/db/queries/pipeline.ts";
import { evaluateTransaction, ownWalletsOf, type AlertRule } from "../../../src/domain/conditions/index.ts";
import type { Transaction } from "../../../src/domain/types.ts";
import { trailingSendsLookup } from "../../../src/pipeline/send-windows.ts";
import { evaluateTransactions, groupByAddress } from "../../../src/pipeline/transaction-firings.ts";
import { OTHER, THIRD, WALLET, counterparty, rule, tx } from "./fixtures.ts";

/** The desk (OWNER) tracks WALLET (hot) and THIRD (cold); OTHER is an outsider. */
const OWNER = "desk";
const ownWallets = ownWalletsOf([
  { owner: OWNER, address: WALLET },
  { owner: OWNER, address: THIRD },
  { owner: "someone-else", address: OTHER },
]);
const ignoring = (overrides: Partial<AlertRule> = {}) => rule("large_transfer", { owner: OWNER, ignoreOwnWallets: true, ...overrides });

const asRow = (alert: AlertRule): ActiveAlertRow => ({ ...alert, activityArmed: false, alias: null, channel: "sms", webhookUrl: null, recipient: "+14155550123" });

/**
 * The firings of one transaction's legs (rows of one signature) for the alerts on WALLET, as the
 * pipeline judges them: one per alert (its legs share the dedupe key; record-events keeps one).
 */
function firedOn(legs: readonly Transaction[], alerts: readonly AlertRule[]) {
  const found = evaluateTransactions(legs, groupByAddress(alerts.map(asRow)), {
    sides: new Map([[WALLET, { events: { address: WALLET, needWindows: false, events: [] }, txIndexes: legs.map((_, k) => k), eventIndexes: legs.map(() => 0) }]]),
    activity: new Map(),
    counterparty: (address) => counterparty({ address }),
    ownWallets,
  }).map(({ firing }): [string, number] => [firing.alertId, firing.observed]);
  return [...new Map(found)];
}

describe("a large_transfer alert with ignoreOwnWallets", () => {
  it("does not judge a send to, nor a receipt from, a wallet its owner tracks", () => {
    for (const leg of [tx({ to: THIRD }), tx({ from: THIRD, to: WALLET })]) {
      expect(evaluateTransaction([ignoring()], leg, { counterparty: null, activity: null, ownWallets })).toEqual([]);
      expect(firedOn([leg], [ignoring()])).toEqual([]);
    }
  });

  it("judges a send to any other address, a wallet another caller tracks included", () => {
    expect(evaluateTransaction([ignoring()], tx({ to: OTHER }), { counterparty: null, activity: null, ownWallets })).toHaveLength(1);
    expect(firedOn([tx({ to: OTHER })], [ignoring()])).toEqual([["alr_large_transfer", 25_000]]);
  });

  it("judges a transaction of several legs by its legs to other addresses, their total without the legs to own wallets", () => {
    // 8,000 USDC to the cold wallet and 6,000 to an outsider: 14,000 in all, 6,000 of it not the desk's own.
    const mixed = [tx({ amount: 8_000, to: THIRD }), { ...tx({ amount: 6_000, to: OTHER }), leg: 1 }];
    expect(firedOn(mixed, [ignoring()])).toEqual([]);
    expect(firedOn(mixed, [ignoring({ threshold: 6_000 })])).toEqual([["alr_large_transfer", 6_000]]);
    // Two outsider legs still add up, the own leg left out.
    const twoOut = [...mixed, { ...tx({ amount: 5_000, to: OTHER }), leg: 2 }];
    expect(firedOn(twoOut, [ignoring()])).toEqual([["alr_large_transfer", 11_000]]);
  });

  it("without it (false or absent), or without the owner's wallets looked up, judges as before", () => {
    const mixed = [tx({ amount: 8_000, to: THIRD }), { ...tx({ amount: 6_000, to: OTHER }), leg: 1 }];
    for (const alert of [rule("large_transfer", { owner: OWNER }), rule("large_transfer", { owner: OWNER, ignoreOwnWallets: false })]) {
      expect(firedOn(mixed, [alert])).toEqual([["alr_large_transfer", 14_000]]);
      expect(firedOn([tx({ to: THIRD })], [alert])).toEqual([["alr_large_transfer", 25_000]]);
    }
    expect(evaluateTransaction([ignoring()], tx({ to: THIRD }), { counterparty: null, activity: null })).toHaveLength(1);
  });

  it("is per owner: another caller's alert on the same wallet, whose owner does not track the cold wallet, judges the sweep", () => {
    const other = rule("large_transfer", { alertId: "alr_other", owner: "someone-else", ignoreOwnWallets: true });
    expect(firedOn([tx({ to: THIRD })], [ignoring(), other])).toEqual([["alr_other", 25_000]]);
  });
});

describe("a windowed large_transfer alert with ignoreOwnWallets", () => {
  const START = 1_795_000_000;
  const send = (k: number, amount: number, to: string): Transaction =>
    tx({ signature: `sig${k}`, amount, to, token: "SOL", mint: null, blockTime: START + 60 * k, slot: 300_000_000 + k });
  // 4,000 SOL to the cold wallet, then 4,000 and 3,000 to an outsider: 11,000 in all within the hour, 7,000 not own.
  const sends = [send(0, 4_000, THIRD), send(1, 4_000, OTHER), send(2, 3_000, OTHER)];
  const windowed = (overrides: Partial<AlertRule> = {}) => ({ ...overrides, token: "SOL", windowSeconds: 3600 });

  function fired(alert: AlertRule) {
    const context = { counterparty: null, activity: null, ownWallets, trailingSends: trailingSendsLookup(new Map([[WALLET, sends]]), undefined, ownWallets) };
    return sends.flatMap((sent, k) => evaluateTransaction([alert], sent, context).map((firing) => [k, firing.observed]));
  }

  it("does not sum the sends to own wallets", () => {
    expect(fired(ignoring(windowed()))).toEqual([]);
    expect(fired(ignoring(windowed({ threshold: 7_000 })))).toEqual([[2, 7_000]]);
  });

  it("sums them without it", () => {
    expect(fired(rule("large_transfer", windowed({ owner: OWNER })))).toEqual([[2, 11_000]]);
  });
});
