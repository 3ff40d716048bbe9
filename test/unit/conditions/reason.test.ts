// The sentences of src/domain/reason.ts: formatting, and short enough for an SMS with room to spare.
import { describe, expect, it } from "vitest";
import {
  formatAmount,
  largeTransferReason,
  riskScoreIncreaseReason,
  shortAddress,
  suspiciousCounterpartyReason,
  unusualActivityReason,
} from "../../../src/domain/reason.ts";
import { RISK_FACTORS } from "../../../src/domain/types.ts";
import { MINTS, OTHER } from "./fixtures.ts";

describe("formatAmount", () => {
  it.each([
    { value: 0, text: "0" },
    { value: 1, text: "1" },
    { value: 25_000, text: "25,000" },
    { value: 1_234.5678, text: "1,234.57" },
    { value: 1_000_000_000, text: "1,000,000,000" },
    { value: 0.5, text: "0.5" },
    { value: 0.000123456, text: "0.0001235" },
    { value: -2_500, text: "-2,500" },
  ])("$value → $text", ({ value, text }) => {
    expect(formatAmount(value)).toBe(text);
  });
});

describe("shortAddress", () => {
  it.each([
    { text: OTHER, short: "A3Cb…E6Fb" },
    { text: MINTS.USDC, short: "EPjF…Dt1v" },
    { text: "USDC", short: "USDC" },
    { text: "TWELVECHARSX", short: "TWELVECHARSX" },
    // Characters, not UTF-16 units: no emoji is cut in half, and twelve emoji stay whole.
    { text: "🐋".repeat(13), short: `${"🐋".repeat(4)}…${"🐋".repeat(4)}` },
    { text: "🐋".repeat(12), short: "🐋".repeat(12) },
    { text: "a🐶🐶🐶🐶🐶🐶🐶🐶🐶🐶🐶🐶b", short: "a🐶🐶🐶…🐶🐶🐶b" },
  ])("$text → $short", ({ text, short }) => {
    expect(shortAddress(text)).toBe(short);
  });
});

describe("reason sentences stay within 120 characters with the longest inputs", () => {
  const worst = {
    direction: "received",
    failed: true,
    amount: 123_456_789_012.34,
    token: MINTS.BONK,
    counterparty: OTHER,
    type: "nft",
  } as const;

  it.each([
    { name: "large_transfer", text: largeTransferReason(worst, 100_000_000_000.5) },
    { name: "suspicious_counterparty", text: suspiciousCounterpartyReason(worst, 100, "sanctioned", 100) },
    { name: "unusual_activity", text: unusualActivityReason(123_456, 12_345.67, 99_999.99, 1_000) },
    { name: "risk_score_increase", text: riskScoreIncreaseReason(0, 100, 100, RISK_FACTORS) },
  ])("$name: $text", ({ text }) => {
    expect(text.length).toBeLessThanOrEqual(120);
    expect(text.endsWith(".")).toBe(true);
  });
});

describe("sentences", () => {
  it("says 1 transaction and 1 point in the singular", () => {
    expect(unusualActivityReason(1, 1, 1, 0.5)).toBe("1 transaction in the last hour, 1× the usual 1 per hour (threshold 0.5×).");
    expect(riskScoreIncreaseReason(40, 41, 1, [])).toBe("Risk score rose 1 point, from 40 to 41 (threshold 1).");
  });
});
