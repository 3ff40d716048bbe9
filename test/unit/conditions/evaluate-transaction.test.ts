import { describe, expect, it } from "vitest";
import { evaluateTransaction, type AlertRule } from "../../../src/domain/conditions/index.ts";
import { OTHER, SIGNATURE, WALLET, counterparty, rule, tx } from "./fixtures.ts";

const sanctioned = counterparty({ labelScore: 100, labelCategory: "sanctioned" });
const burst = { countBefore: 4, countAfter: 5, previous7DaysCount: 0 };

describe("evaluateTransaction", () => {
  const rules: AlertRule[] = [
    rule("large_transfer", { alertId: "alr_big" }),
    rule("large_transfer", { alertId: "alr_huge", threshold: 1_000_000 }),
    rule("large_transfer", { alertId: "alr_bonk", token: "BONK" }),
    rule("suspicious_counterparty", { alertId: "alr_cp" }),
    rule("unusual_activity", { alertId: "alr_busy" }),
    rule("risk_score_increase", { alertId: "alr_score", threshold: 0, baselineScore: 0 }),
  ];

  it.each([
    { case: "nothing known about the context", context: { counterparty: null, activity: null }, fired: ["alr_big"] },
    { case: "a sanctioned counterparty", context: { counterparty: sanctioned, activity: null }, fired: ["alr_big", "alr_cp"] },
    { case: "a burst of activity", context: { counterparty: null, activity: burst }, fired: ["alr_big", "alr_busy"] },
    { case: "both", context: { counterparty: sanctioned, activity: burst }, fired: ["alr_big", "alr_cp", "alr_busy"] },
  ])("picks only the rules that fire, in order, with $case", ({ context, fired }) => {
    const firings = evaluateTransaction(rules, tx(), context);
    expect(firings.map((f) => f.alertId)).toEqual(fired);
    expect(firings.every((f) => f.dedupeKey === SIGNATURE && f.transactionSignature === SIGNATURE)).toBe(true);
  });

  it("never fires a risk_score_increase rule from a transaction", () => {
    const firings = evaluateTransaction([rule("risk_score_increase", { threshold: 0, baselineScore: 0 })], tx(), {
      counterparty: sanctioned,
      activity: burst,
    });
    expect(firings).toEqual([]);
  });

  it("fires nothing for a small, failed self-transfer in a quiet hour", () => {
    const quiet = { countBefore: 0, countAfter: 1, previous7DaysCount: 0 };
    const firings = evaluateTransaction(rules, tx({ amount: 1, status: "failed", from: WALLET, to: WALLET }), {
      counterparty: null,
      activity: quiet,
    });
    expect(firings).toEqual([]);
  });

  it("returns no firings for no rules", () => {
    expect(evaluateTransaction([], tx({ from: OTHER, to: WALLET }), { counterparty: sanctioned, activity: burst })).toEqual([]);
  });
});
