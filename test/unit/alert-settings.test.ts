import { describe, expect, it } from "vitest";
import { effectiveThreshold, tokenFilter } from "../../src/domain/alert-settings.ts";
import { decimalPlaces } from "../../src/domain/decimal.ts";

describe("effectiveThreshold", () => {
  it.each([
    ["suspicious_counterparty", 75],
    ["unusual_activity", 5],
    ["risk_score_increase", 10],
  ] as const)("defaults %s to %d", (condition, threshold) => {
    expect(effectiveThreshold(condition, undefined)).toEqual({ ok: true, threshold });
  });

  it("has no default for large_transfer and says what the threshold means", () => {
    expect(effectiveThreshold("large_transfer", undefined)).toEqual({
      ok: false,
      message: expect.stringMatching(/^is required for large_transfer alerts: an amount in the transaction's token units/),
    });
  });

  it.each([
    ["large_transfer", 0.000000001],
    ["large_transfer", 1e18],
    ["suspicious_counterparty", 0],
    ["suspicious_counterparty", 100],
    ["unusual_activity", 0.5],
    ["unusual_activity", 1_000_000],
    ["risk_score_increase", 1],
    ["risk_score_increase", 100],
  ] as const)("keeps the %s threshold %d at the edge of its range", (condition, threshold) => {
    expect(effectiveThreshold(condition, threshold)).toEqual({ ok: true, threshold });
  });

  it.each([
    ["large_transfer", 0],
    ["large_transfer", 0.0000000001],
    ["large_transfer", 1.1e18],
    ["suspicious_counterparty", -0.1],
    ["suspicious_counterparty", 101],
    ["unusual_activity", 0],
    ["unusual_activity", 1_000_001],
    ["risk_score_increase", 0.9],
    ["risk_score_increase", 100.1],
    ["risk_score_increase", 1.5],
    ["risk_score_increase", Number.NaN],
    ["large_transfer", Number.POSITIVE_INFINITY],
  ] as const)("refuses the %s threshold %d", (condition, threshold) => {
    const result = effectiveThreshold(condition, threshold);
    expect(result).toEqual({ ok: false, message: expect.stringMatching(new RegExp(`^must be .* for ${condition} alerts$`)) });
  });

  it.each([
    ["large_transfer", 10.0000000004],
    ["large_transfer", 1e-10 + 1],
    ["unusual_activity", 1.0000000001],
    ["suspicious_counterparty", 74.9999999999],
  ] as const)("refuses the %s threshold %d: finer than the 9 decimals it is stored with", (condition, threshold) => {
    expect(effectiveThreshold(condition, threshold)).toEqual({ ok: false, message: "must have at most 9 decimal places" });
  });

  it.each([
    ["large_transfer", 10.000000001],
    ["unusual_activity", 1.123456789],
  ] as const)("keeps the %s threshold %d: 9 decimals fit", (condition, threshold) => {
    expect(effectiveThreshold(condition, threshold)).toEqual({ ok: true, threshold });
  });
});

describe("decimalPlaces", () => {
  it.each([
    [10, 0],
    [1e21, 0],
    [0.5, 1],
    [-0.25, 2],
    [1e-7, 7],
    [1.5e-9, 10],
    [10.0000000004, 10],
  ])("counts %d as %d decimal places", (value, places) => {
    expect(decimalPlaces(value)).toBe(places);
  });
});

// A filter that can never match made a large_transfer alert that never fires, answered 201.
describe("tokenFilter", () => {
  it.each([
    ["SOL", "SOL"],
    ["SOL ", "SOL"],
    ["\tusdc\n", "usdc"],
    ["WSOL", "WSOL"],
    ["wSOL", "wSOL"],
    ["JitoSOL", "JitoSOL"],
    [" 7GCihgDB8fe6KNjn2MYtkzZcRjQy3t9GHdC8uHYmW2hr", "7GCihgDB8fe6KNjn2MYtkzZcRjQy3t9GHdC8uHYmW2hr"],
  ])("keeps %j as %j", (given, token) => {
    expect(tokenFilter(given)).toEqual({ ok: true, token });
  });

  it.each(["", "   ", "\t\n"])("refuses %j: it names no token", (given) => {
    expect(tokenFilter(given)).toEqual({ ok: false, message: "must name the token (a well-known symbol or a mint address), not only spaces" });
  });

  it.each(["POPCAT", "S O L", "SOL2", "2222222222222222222222222222222"])(
    "refuses %j, neither a well-known symbol nor a mint, and asks for the mint",
    (given) => {
      const result = tokenFilter(given);
      expect(result.ok).toBe(false);
      expect(!result.ok && result.message).toMatch(/^is neither a well-known symbol \(SOL, USDC, USDT, .*JTO, in any letter case; WSOL is SOL\) nor a mint address: .*give the token's mint address instead$/);
    },
  );

  it.each([
    ["epjfwdd5aufqssqem2qn1xzybapc8g4weggkzwytdt1v", "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"],
    [" SO11111111111111111111111111111111111111112 ", "So11111111111111111111111111111111111111112"],
    ["JUPYIWRYJFSKUPIHA7HKER8VUTAEFOSYBKEDZNSDVCN", "JUPyiwrYJFskUPiHa7hkeR8VUtAeFoSYbKedZNsDvCN"],
  ])("refuses %j, a well-known mint in other letter case (another mint, never matched), naming the mint meant", (given, mint) => {
    expect(tokenFilter(given)).toEqual({
      ok: false,
      message: `is a well-known mint in other letter case, which is another mint; mints are case-sensitive: did you mean ${mint}?`,
    });
  });

  it("keeps a well-known mint written exactly", () => {
    expect(tokenFilter("EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v")).toEqual({ ok: true, token: "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v" });
  });
});
