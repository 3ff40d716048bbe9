import { describe, expect, it } from "vitest";
import { counterpartyOf, evaluateSuspiciousCounterparty } from "../../../src/domain/conditions/index.ts";
import { OTHER, SIGNATURE, THIRD, WALLET, counterparty, rule, tx } from "./fixtures.ts";

describe("counterpartyOf", () => {
  it.each([
    { from: WALLET, to: OTHER, expected: OTHER, case: "the receiver of what the wallet sent" },
    { from: OTHER, to: WALLET, expected: OTHER, case: "the sender of what the wallet received" },
    { from: WALLET, to: WALLET, expected: null, case: "nobody in a self-transfer" },
    { from: OTHER, to: THIRD, expected: null, case: "nobody when the wallet is not part of it" },
  ])("is $case", ({ from, to, expected }) => {
    expect(counterpartyOf(WALLET, tx({ from, to }))).toBe(expected);
  });
});

describe("suspicious_counterparty", () => {
  it.each([
    { labelScore: 74, riskScore: null, fires: false, case: "label score just below" },
    { labelScore: 75, riskScore: null, fires: true, case: "label score at" },
    { labelScore: 76, riskScore: null, fires: true, case: "label score just above" },
    { labelScore: null, riskScore: 74, fires: false, case: "own risk score just below" },
    { labelScore: null, riskScore: 75, fires: true, case: "own risk score at" },
    { labelScore: 40, riskScore: 80, fires: true, case: "a low label but a high own score" },
    { labelScore: 90, riskScore: 10, fires: true, case: "a high label but a low own score" },
    { labelScore: 74, riskScore: 74, fires: false, case: "both just below" },
    { labelScore: null, riskScore: null, fires: false, case: "neither known" },
  ])("$case the threshold (75) fires: $fires", ({ labelScore, riskScore, fires }) => {
    const firing = evaluateSuspiciousCounterparty(
      rule("suspicious_counterparty"),
      tx(),
      counterparty({ labelScore, labelCategory: labelScore === null ? null : "gambling", riskScore }),
    );
    expect(firing !== null).toBe(fires);
    if (firing) expect(firing.observed).toBe(Math.max(labelScore ?? 0, riskScore ?? 0));
  });

  it("fires with the signature as dedupe key and a sentence naming the label", () => {
    const firing = evaluateSuspiciousCounterparty(
      rule("suspicious_counterparty"),
      tx({ amount: 5, token: "SOL", mint: null }),
      counterparty({ labelScore: 95, labelCategory: "sanctioned" }),
    );
    expect(firing).toEqual({
      alertId: "alr_suspicious_counterparty",
      dedupeKey: SIGNATURE,
      observed: 95,
      reason: "Sent 5 SOL to A3CbMR…ZdE6Fb (sanctioned, risk 95, threshold 75).",
      transactionSignature: SIGNATURE,
      // The counterparty as judged, for the notification's structured fields.
      facts: { counterparty: counterparty({ labelScore: 95, labelCategory: "sanctioned" }) },
    });
  });

  it("names no label when the counterparty's own score is what crossed the threshold", () => {
    const firing = evaluateSuspiciousCounterparty(
      rule("suspicious_counterparty"),
      tx({ from: OTHER, to: WALLET }),
      counterparty({ labelScore: 40, labelCategory: "exchange", riskScore: 80 }),
    );
    expect(firing?.reason).toBe("Received 25,000 USDC from A3CbMR…ZdE6Fb (risk 80, threshold 75).");
  });

  it.each([
    { from: WALLET, to: OTHER, verb: "Sent" },
    { from: OTHER, to: WALLET, verb: "Received" },
  ])("fires in either direction ($verb)", ({ from, to, verb }) => {
    const firing = evaluateSuspiciousCounterparty(
      rule("suspicious_counterparty"),
      tx({ from, to }),
      counterparty({ labelScore: 90, labelCategory: "mixer" }),
    );
    expect(firing?.reason.startsWith(verb)).toBe(true);
  });

  it("fires for a failed transaction: the attempt is the news", () => {
    const firing = evaluateSuspiciousCounterparty(
      rule("suspicious_counterparty"),
      tx({ status: "failed" }),
      counterparty({ labelScore: 100, labelCategory: "sanctioned" }),
    );
    expect(firing?.reason).toBe("Tried to send 25,000 USDC to A3CbMR…ZdE6Fb (sanctioned, risk 100, threshold 75).");
  });

  it("does not fire for a self-transfer, which has no counterparty", () => {
    const self = tx({ from: WALLET, to: WALLET });
    const firing = evaluateSuspiciousCounterparty(
      rule("suspicious_counterparty"),
      self,
      counterparty({ address: WALLET, labelScore: 100, labelCategory: "sanctioned" }),
    );
    expect(firing).toBeNull();
  });

  it("does not fire when the risk handed in is about an address other than the counterparty", () => {
    const firing = evaluateSuspiciousCounterparty(
      rule("suspicious_counterparty"),
      tx(),
      counterparty({ address: THIRD, labelScore: 100, labelCategory: "sanctioned" }),
    );
    expect(firing).toBeNull();
  });

  it("does not fire without counterparty risk, even at threshold 0", () => {
    expect(evaluateSuspiciousCounterparty(rule("suspicious_counterparty", { threshold: 0 }), tx(), null)).toBeNull();
    expect(evaluateSuspiciousCounterparty(rule("suspicious_counterparty", { threshold: 0 }), tx(), counterparty())).toBeNull();
  });

  it("does not fire for a rule of another condition", () => {
    const risky = counterparty({ labelScore: 100, labelCategory: "sanctioned" });
    expect(evaluateSuspiciousCounterparty(rule("large_transfer", { threshold: 1 }), tx(), risky)).toBeNull();
  });
});
