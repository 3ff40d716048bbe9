// The sentences of src/domain/reason.ts: formatting, and short enough for an SMS with room to spare.
import { describe, expect, it } from "vitest";
import {
  formatAmount,
  formatRounded,
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
    { value: 1_234.5678, text: "1,234.5678" },
    { value: 1_000_000_000, text: "1,000,000,000" },
    { value: 0.5, text: "0.5" },
    { value: 0.000123456, text: "0.000123456" },
    { value: -2_500, text: "-2,500" },
  ])("$value → $text", ({ value, text }) => {
    expect(formatAmount(value)).toBe(text);
  });
});

describe("formatAmount: an amount exactly as it is, never rounded", () => {
  // Each of these read rounded before: "10,000", "1", "0.3", "1.01", "12,345,678,901.12".
  it.each([
    { value: 9_999.996, text: "9,999.996" },
    { value: 9_999.995, text: "9,999.995" },
    { value: 0.999999, text: "0.999999" },
    { value: 1.005, text: "1.005" },
    { value: 25_000.000001, text: "25,000.000001" },
    { value: 12_345_678_901.123, text: "12,345,678,901.123" },
    { value: Number("123456789.123456789"), text: "123,456,789.12345679" }, // the double holds 17 digits of it
    { value: 0.000123456789, text: "0.000123456789" },
    { value: 0.1 + 0.2, text: "0.30000000000000004" }, // what String() says: the shortest that reads back
  ])("$value → $text", ({ value, text }) => {
    expect(formatAmount(value)).toBe(text);
  });

  /** Rows that must all hold; a table per kind of number, each with a row that rounding got wrong. */
  const expectRows = (rows: Array<[number, string]>) => {
    for (const [value, text] of rows) expect(formatAmount(value), String(value)).toBe(text);
  };

  it("reads zero, negatives and non-numbers plainly", () => {
    expectRows([
      [0, "0"],
      [-0, "0"], // not "-0"
      [-2_500, "-2,500"],
      [-9_999.996, "-9,999.996"],
      [-0.000000001, "-0.000000001"],
      [Number.NaN, "NaN"],
      [Number.POSITIVE_INFINITY, "Infinity"],
    ]);
  });

  it("never shows an exponent, very small or very large, where String() uses one", () => {
    expectRows([
      [0.000000001, "0.000000001"], // the smallest threshold, 1e-9
      [1e-7, "0.0000001"],
      [1.23456789e-7, "0.000000123456789"],
      [1.5e-10, "0.00000000015"],
      [1e21, "1,000,000,000,000,000,000,000"],
      [1.2345678901234568e21, "1,234,567,890,123,456,800,000"],
      [1e28, "10,000,000,000,000,000,000,000,000,000"], // the ingest maximum
      [999, "999"],
      [1_000, "1,000"],
      [999_999.5, "999,999.5"],
      [1_000_000.25, "1,000,000.25"],
    ]);
  });
});

describe("formatRounded: multiples and baselines, rounded as amounts used to be", () => {
  it.each([
    { value: 0, text: "0" },
    { value: 5.2, text: "5.2" },
    { value: 2.666666, text: "2.67" },
    { value: 10.238095238095237, text: "10.24" },
    { value: 12_345.678, text: "12,345.68" },
    { value: 0.000123456, text: "0.0001235" },
  ])("$value → $text", ({ value, text }) => {
    expect(formatRounded(value)).toBe(text);
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
    {
      name: "unusual_activity",
      text: unusualActivityReason({ count: 123_456, usualPerHour: 12_345.67, baseline: 12_345.67, hourTo: NOV_26_0554, evaluatedAt: NOV_26_0554 + 2 * DAY }, 99_999.99, 1_000),
    },
    {
      name: "unusual_activity with no earlier activity",
      text: unusualActivityReason({ count: 999, usualPerHour: 0, baseline: 1, hourTo: NOV_26_0554, evaluatedAt: NOV_26_0554 + 2 * DAY }, 999, 5),
    },
    { name: "risk_score_increase", text: riskScoreIncreaseReason(0, 100, 100, RISK_FACTORS) },
  ])("$name: $text", ({ text }) => {
    expect(text.length).toBeLessThanOrEqual(120);
    expect(text.endsWith(".")).toBe(true);
  });
});

describe("reason sentences state amounts exactly", () => {
  const sent = { direction: "sent", failed: false, amount: 9_999.996, token: "USDC", counterparty: OTHER, type: "transfer" } as const;

  it("shows a transfer just over its threshold as just over, not as both 10,000", () => {
    expect(largeTransferReason(sent, 9_999.995)).toBe("Sent 9,999.996 USDC to A3CbMR…ZdE6Fb (threshold 9,999.995).");
  });

  it("shows an amount just under 1 as it is, not as 1", () => {
    expect(largeTransferReason({ ...sent, direction: "received", amount: 0.999999, token: "SOL" }, 0.5)).toBe(
      "Received 0.999999 SOL from A3CbMR…ZdE6Fb (threshold 0.5).",
    );
  });

  it("shows a counterparty alert's amount and its score threshold as they are", () => {
    expect(suspiciousCounterpartyReason({ ...sent, failed: true }, 75, "sanctioned", 74.995)).toBe(
      "Tried to send 9,999.996 USDC to A3CbMR…ZdE6Fb (sanctioned, risk 75, threshold 74.995).",
    );
  });

  it("keeps a long exact amount and threshold within 120 characters", () => {
    const text = largeTransferReason(
      { direction: "received", failed: false, amount: 123_456_789.12345679, token: MINTS.BONK, counterparty: OTHER, type: "nft" },
      100_000_000.12345679,
    );
    expect(text).toBe("Received 123,456,789.12345679 DezX…B263 from A3CbMR…ZdE6Fb in an NFT trade (threshold 100,000,000.12345679).");
    expect(text.length).toBeLessThanOrEqual(120);
  });
});

describe("sentences", () => {
  it("says 1 transaction and 1 point in the singular", () => {
    expect(unusualActivityReason({ count: 1, usualPerHour: 1, baseline: 1, hourTo: NOV_26_0554 }, 1, 0.5)).toBe(
      "1 transaction in the last hour, 1× the usual 1 per hour (threshold 0.5×).",
    );
    expect(riskScoreIncreaseReason(40, 41, 1, [])).toBe("Risk score rose 1 point, from 40 to 41 (threshold 1).");
  });
});

/** 2026-11-26T05:54:19Z, in Unix seconds. */
const NOV_26_0554 = Date.UTC(2026, 10, 26, 5, 54, 19) / 1000;
const DAY = 86_400;

describe("unusual_activity sentences say which hour and what the baseline is", () => {
  const burst = { count: 5, usualPerHour: 2, baseline: 2, hourTo: NOV_26_0554 };

  it("says the last hour when the burst is judged within a few minutes of its newest transaction", () => {
    expect(unusualActivityReason({ ...burst, evaluatedAt: NOV_26_0554 + 300 }, 2.5, 2.5)).toBe(
      "5 transactions in the last hour, 2.5× the usual 2 per hour (threshold 2.5×).",
    );
  });

  it("names the hour by its end when the burst is judged later the same day", () => {
    expect(unusualActivityReason({ ...burst, evaluatedAt: NOV_26_0554 + 301 }, 2.5, 2.5)).toBe(
      "5 transactions in the hour to 05:54 UTC, 2.5× the usual 2 per hour (threshold 2.5×).",
    );
  });

  it("adds the date when the burst was on another day than its judgment (a backfill)", () => {
    expect(unusualActivityReason({ ...burst, evaluatedAt: NOV_26_0554 + 2 * DAY }, 2.5, 2.5)).toBe(
      "5 transactions in the hour to 2026-11-26 05:54 UTC, 2.5× the usual 2 per hour (threshold 2.5×).",
    );
    // 23:58 judged at 00:05 the next day: another day, though minutes apart.
    const late = Date.UTC(2026, 10, 26, 23, 58, 0) / 1000;
    expect(unusualActivityReason({ ...burst, hourTo: late, evaluatedAt: late + 7 * 60 }, 2.5, 2.5)).toContain("in the hour to 2026-11-26 23:58 UTC,");
  });

  it("says the baseline is the floor, not a usual rate, and why when the wallet had no earlier activity", () => {
    expect(unusualActivityReason({ count: 5, usualPerHour: 0, baseline: 1, hourTo: NOV_26_0554 }, 5, 5)).toBe(
      "5 transactions in the last hour, 5× the floor of 1 per hour (no earlier activity, threshold 5×).",
    );
    expect(unusualActivityReason({ count: 5, usualPerHour: 0.5, baseline: 1, hourTo: NOV_26_0554 }, 5, 5)).toBe(
      "5 transactions in the last hour, 5× the floor of 1 per hour (threshold 5×).",
    );
  });
});

describe("counterparties in reasons", () => {
  it("show 6 characters each side, so a lookalike of the first and last 4 reads differently", () => {
    const genuine = "8pMWdCPaQUSsjsMpvW69s84bWf1JF5K5f5nrzYi2toWd";
    // Address poisoning: ground to the same first and last 4 characters.
    const lookalike = "8pMWZqPaQUSsjsMpvW69s84bWf1JF5K5f5nrzYRktoWd";
    const sent = (counterparty: string) =>
      largeTransferReason({ direction: "sent", failed: false, amount: 50_000, token: "USDC", counterparty, type: "transfer" }, 1_000);
    expect(sent(genuine)).toBe("Sent 50,000 USDC to 8pMWdC…i2toWd (threshold 1,000).");
    expect(sent(lookalike)).toBe("Sent 50,000 USDC to 8pMWZq…RktoWd (threshold 1,000).");
    // Mints keep 4 each side: the email names a token's mint in full.
    expect(shortAddress(MINTS.USDC)).toBe("EPjF…Dt1v");
  });
});
