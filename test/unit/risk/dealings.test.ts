// What new_counterparty_burst can count (src/domain/risk/dealings.ts) and how the batch's facts
// hand it to the activity counters (sidesByAddress in src/pipeline/batch-facts.ts): only the
// other sides the wallet sent to, failed sends too, may be new; those it received from are only
// remembered.
import { describe, expect, it } from "vitest";
import { dealingOf } from "../../../src/domain/risk/index.ts";
import { sidesByAddress } from "../../../src/pipeline/batch-facts.ts";
import type { Transaction } from "../../../src/domain/types.ts";
import { OTHER, THIRD, WALLET, tx } from "../conditions/fixtures.ts";

describe("dealingOf", () => {
  it.each([
    { from: WALLET, to: OTHER, status: "success", expected: { counterparty: OTHER, sentTo: true }, case: "a send: may be new" },
    { from: WALLET, to: OTHER, status: "failed", expected: { counterparty: OTHER, sentTo: true }, case: "a failed send: the wallet still reached out" },
    { from: OTHER, to: WALLET, status: "success", expected: { counterparty: OTHER, sentTo: false }, case: "a transfer received: never new" },
    { from: OTHER, to: WALLET, status: "failed", expected: { counterparty: OTHER, sentTo: false }, case: "a failed transfer received: never new" },
    { from: WALLET, to: WALLET, status: "success", expected: null, case: "a self-transfer: nobody" },
    { from: OTHER, to: THIRD, status: "success", expected: null, case: "a transfer the wallet is not part of: nobody" },
  ] as const)("is $case", ({ from, to, status, expected }) => {
    expect(dealingOf(WALLET, tx({ from, to, status }))).toEqual(expected);
  });
});

describe("sidesByAddress", () => {
  const DUST = ["DUST1111111111111111111111111111111111111111", "DUST2222222222222222222222222222222222222222"];
  const leg = (signature: string, leg: number, overrides: Partial<Transaction>) => ({ ...tx({ signature, leg, ...overrides }), batchId: "bat_1" });
  const eventsOf = (txs: Array<Transaction & { batchId: string }>) =>
    sidesByAddress(txs, new Set([WALLET])).get(WALLET)!.events.events.map(({ sentTo, receivedFrom, failedSent }) => ({ sentTo, receivedFrom, failedSent }));

  it("puts the senders of unsolicited dust among those received from, never among those sent to", () => {
    const dust = DUST.map((from, k) => leg(`sig${k}`, 0, { from, to: WALLET, amount: 0.0000001, token: "SOL", mint: null }));
    expect(eventsOf(dust)).toEqual([
      { sentTo: [], receivedFrom: [DUST[0]], failedSent: false },
      { sentTo: [], receivedFrom: [DUST[1]], failedSent: false },
    ]);
  });

  it("puts the receiver of a failed send among those sent to", () => {
    expect(eventsOf([leg("sig", 0, { to: OTHER, status: "failed" })])).toEqual([{ sentTo: [OTHER], receivedFrom: [], failedSent: true }]);
  });

  it("lists a counterparty of one transaction once, among those sent to when any leg sent to it", () => {
    // A swap with a pool, its legs either way round, and a third leg received from someone else.
    const swap = (signature: string, first: "in" | "out") => {
      const out = { from: WALLET, to: OTHER };
      const into = { from: OTHER, to: WALLET };
      return [leg(signature, 0, first === "in" ? into : out), leg(signature, 1, first === "in" ? out : into), leg(signature, 2, { from: THIRD, to: WALLET })];
    };
    expect(eventsOf([...swap("sigA", "in"), ...swap("sigB", "out")])).toEqual([
      { sentTo: [OTHER], receivedFrom: [THIRD], failedSent: false },
      { sentTo: [OTHER], receivedFrom: [THIRD], failedSent: false },
    ]);
  });

  it("keeps a self-transfer free of counterparties", () => {
    expect(eventsOf([leg("sig", 0, { to: WALLET })])).toEqual([{ sentTo: [], receivedFrom: [], failedSent: false }]);
  });
});
