// A large_transfer names its counterparty's label in its reason: until 2026-11-28 a desk whose only
// alert is a large_transfer (the most common set-up) was texted "Sent 2,000 SOL to 6R9jQi...kFJqLF
// (threshold 1,000)." for a send to an OFAC-listed address, though the evaluation knew the label.
// The pipeline looks the other side up for a wallet with a large_transfer alert as it does for
// one with a suspicious_counterparty alert (pipeline/transaction-firings.ts).
import { describe, expect, it } from "vitest";
import type { ActiveAlertRow } from "../../../src/db/queries/pipeline.ts";
import { evaluateLargeTransfer, evaluateTransaction } from "../../../src/domain/conditions/index.ts";
import { largeTransferReason } from "../../../src/domain/reason.ts";
import { evaluateTransactions, groupByAddress } from "../../../src/pipeline/transaction-firings.ts";
import { OTHER, THIRD, WALLET, counterparty, rule, tx } from "./fixtures.ts";

const OFAC = counterparty({ labelScore: 100, labelCategory: "sanctioned", labels: [{ category: "sanctioned", score: 100, source: "OFAC SDN" }] });

describe("a large_transfer to or from a labelled address", () => {
  it.each([
    { from: WALLET, to: OTHER, reason: "Sent 25,000 USDC to A3CbMR…ZdE6Fb (sanctioned, threshold 10,000)." },
    { from: OTHER, to: WALLET, reason: "Received 25,000 USDC from A3CbMR…ZdE6Fb (sanctioned, threshold 10,000)." },
  ])("names the label in its reason: $reason", ({ from, to, reason }) => {
    const firing = evaluateLargeTransfer(rule("large_transfer"), tx({ from, to }), null, OFAC);
    expect(firing?.reason).toBe(reason);
    // The lookup it named is the firing's counterparty (the payload's, pipeline/notification.ts).
    expect(firing?.facts).toEqual({ counterparty: OFAC });
  });

  it("names nothing for an address without a label, or a lookup of another address than the other side", () => {
    expect(evaluateLargeTransfer(rule("large_transfer"), tx(), null, counterparty({ riskScore: 90 }))?.reason).toBe(
      "Sent 25,000 USDC to A3CbMR…ZdE6Fb (threshold 10,000).",
    );
    const elsewhere = { ...OFAC, address: THIRD };
    const firing = evaluateLargeTransfer(rule("large_transfer"), tx(), null, elsewhere);
    expect(firing?.reason).toBe("Sent 25,000 USDC to A3CbMR…ZdE6Fb (threshold 10,000).");
    expect(firing?.facts).toBeUndefined();
  });

  it("is told the other side by evaluateTransaction", () => {
    const [firing] = evaluateTransaction([rule("large_transfer")], tx(), { counterparty: OFAC, activity: null });
    expect(firing?.reason).toBe("Sent 25,000 USDC to A3CbMR…ZdE6Fb (sanctioned, threshold 10,000).");
  });

  it("stays within 120 characters with the longest inputs a large_transfer fires on (a success)", () => {
    const worst = { direction: "received", failed: false, amount: 123_456_789_012.34, token: "DezX…B263", counterparty: OTHER, type: "nft" } as const;
    const text = largeTransferReason(worst, 100_000_000_000.5, "sanctioned");
    expect(text).toBe("Received 123,456,789,012.34 DezX…B263 from A3CbMR…ZdE6Fb in an NFT trade (sanctioned, threshold 100,000,000,000.5).");
    expect(text.length).toBeLessThanOrEqual(120);
  });
});

describe("evaluateTransactions for a wallet whose only alert is a large_transfer", () => {
  const alert: ActiveAlertRow = {
    ...rule("large_transfer"),
    activityArmed: false,
    alias: "Treasury",
    channel: "sms",
    webhookUrl: null,
    recipient: "+14155550123",
  };

  it("looks the other side up, and the reason names its label", () => {
    const asked: string[] = [];
    const found = evaluateTransactions([tx()], groupByAddress([alert]), {
      sides: new Map([[WALLET, { events: { address: WALLET, needWindows: false, events: [] }, txIndexes: [0], eventIndexes: [0] }]]),
      activity: new Map(),
      counterparty: (address) => {
        asked.push(address);
        return address === OTHER ? OFAC : counterparty({ address });
      },
    });
    expect(found.map(({ firing }) => firing.reason)).toEqual(["Sent 25,000 USDC to A3CbMR…ZdE6Fb (sanctioned, threshold 10,000)."]);
    expect(found[0]!.firing.facts?.counterparty).toEqual(OFAC);
    expect(asked).toContain(OTHER);
  });
});
