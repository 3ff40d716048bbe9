// Which of a wallet's transactions are its own sends (sidesByAddress in src/pipeline/
// batch-facts.ts): only these end a silence for dormant_reactivation (README "Risk score"). A
// stranger's dust to a cold wallet is not its keys being used.
import { describe, expect, it } from "vitest";
import type { Transaction } from "../../../src/domain/types.ts";
import { sidesByAddress } from "../../../src/pipeline/batch-facts.ts";
import { OTHER, THIRD, WALLET, tx } from "../conditions/fixtures.ts";

const leg = (signature: string, leg: number, overrides: Partial<Transaction>) => ({ ...tx({ signature, leg, ...overrides }), batchId: "bat_1" });
const sentOf = (txs: Array<Transaction & { batchId: string }>) =>
  sidesByAddress(txs, new Set([WALLET])).get(WALLET)!.events.events.map((event) => event.sent);

describe("the wallet's own sends (what ends a silence)", () => {
  it.each([
    { case: "a transfer it sent", legs: [{ from: WALLET, to: OTHER }], sent: [true] },
    { case: "a send that failed (its keys signed it)", legs: [{ from: WALLET, to: OTHER, status: "failed" }], sent: [true] },
    { case: "a self-transfer", legs: [{ from: WALLET, to: WALLET }], sent: [true] },
    { case: "a dust transfer it received", legs: [{ from: OTHER, to: WALLET, amount: 0.000000001, token: "SOL", mint: null }], sent: [false] },
    { case: "a failed transfer to it", legs: [{ from: OTHER, to: WALLET, status: "failed" }], sent: [false] },
    { case: "a swap whose first leg it received, its second it sent", legs: [{ from: OTHER, to: WALLET }, { from: WALLET, to: OTHER }], sent: [true] },
    { case: "a payout of which it received one leg", legs: [{ from: OTHER, to: THIRD }, { from: OTHER, to: WALLET }], sent: [false] },
  ] as const)("$case → sent: $sent", ({ legs, sent }) => {
    expect(sentOf(legs.map((overrides, k) => leg("sig", k, overrides)))).toEqual(sent);
  });

  it("tells apart the transactions of one batch", () => {
    const batch = [leg("sigA", 0, { from: OTHER, to: WALLET }), leg("sigB", 0, { from: WALLET, to: OTHER }), leg("sigC", 0, { from: THIRD, to: WALLET })];
    expect(sentOf(batch)).toEqual([false, true, false]);
  });
});
