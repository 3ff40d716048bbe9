// Several legs of one transaction fire one alert under one dedupe key: one event for them. A
// large_transfer compares amounts within one token only and names each token that crossed, the
// wallet's outgoing side first (a swap of 10,000 SOL for 2,000,000 BONK read "Received
// 2,000,000 BONK" alone); a suspicious_counterparty event is still its riskiest leg's.
import { describe, expect, it } from "vitest";
import {
  evaluateLargeTransfer,
  evaluateSuspiciousCounterparty,
  legTotals,
  oneEventPerTransaction,
  type AlertRule,
  type LegFiring,
} from "../../../src/domain/conditions/index.ts";
import { WRAPPED_SOL_MINT } from "../../../src/domain/tokens.ts";
import type { Transaction } from "../../../src/domain/types.ts";
import { MINTS, OTHER, SIGNATURE, THIRD, WALLET, counterparty, rule, tx } from "./fixtures.ts";

const USDT_MINT = "Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB";
const POOL = THIRD;

const sol = (amount: number, sent: boolean, extra: Partial<Transaction> = {}) =>
  tx({ amount, token: "SOL", mint: WRAPPED_SOL_MINT, type: "swap", from: sent ? WALLET : POOL, to: sent ? POOL : WALLET, ...extra });
const token = (symbol: string, mint: string) => (amount: number, sent: boolean, extra: Partial<Transaction> = {}) =>
  tx({ amount, token: symbol, mint, type: "swap", from: sent ? WALLET : POOL, to: sent ? POOL : WALLET, ...extra });
const bonk = token("BONK", MINTS.BONK);
const usdc = token("USDC", MINTS.USDC);
const usdt = token("USDT", USDT_MINT);

/** The firings of a large_transfer rule (no token filter) on the legs of one transaction, in leg order, as the pipeline makes them. */
function largeTransferFirings(legs: Transaction[], threshold = 1_000): LegFiring[] {
  const alert = rule("large_transfer", { threshold });
  const totals = legTotals(WALLET, legs);
  return legs.flatMap((leg, k) => {
    const firing = evaluateLargeTransfer(alert, { ...leg, leg: k }, totals[k]!);
    return firing ? [{ alert, firing, transaction: { ...leg, leg: k } }] : [];
  });
}

describe("oneEventPerTransaction: large_transfer legs of several tokens", () => {
  it.each([
    {
      case: "a swap of SOL for BONK: what left the wallet first, and the event is the SOL leg's",
      legs: [bonk(2_000_000, false), sol(10_000, true)],
      reason: "Sent 10,000 SOL and received 2,000,000 BONK in a swap (threshold 1,000).",
      observed: 10_000,
      token: "SOL",
    },
    {
      case: "the other direction, BONK for SOL: the BONK sent is the event",
      legs: [sol(10_000, false), bonk(2_000_000, true)],
      reason: "Sent 2,000,000 BONK and received 10,000 SOL in a swap (threshold 1,000).",
      observed: 2_000_000,
      token: "BONK",
    },
    {
      case: "three tokens, two of them sent: both named, in leg order",
      legs: [sol(10_000, true), bonk(2_000_000, false), usdc(5_000, true)],
      reason: "Sent 10,000 SOL and 5,000 USDC, and received 2,000,000 BONK in a swap (threshold 1,000).",
      observed: 10_000,
      token: "SOL",
    },
    {
      case: "equal amounts of two tokens: both named (an amount of one says nothing of the other), the sent one the event",
      legs: [usdt(5_000, false), usdc(5_000, true)],
      reason: "Sent 5,000 USDC and received 5,000 USDT in a swap (threshold 1,000).",
      observed: 5_000,
      token: "USDC",
    },
    {
      case: "two tokens received only",
      legs: [usdc(5_000, false), bonk(2_000_000, false)],
      reason: "Received 5,000 USDC and 2,000,000 BONK in a swap (threshold 1,000).",
      observed: 5_000,
      token: "USDC",
    },
    {
      case: "two tokens sent in a transfer: no kind named",
      legs: [sol(10_000, true, { type: "transfer", to: OTHER }), usdc(5_000, true, { type: "transfer", to: OTHER })],
      reason: "Sent 10,000 SOL and 5,000 USDC (threshold 1,000).",
      observed: 10_000,
      token: "SOL",
    },
  ])("$case", ({ legs, reason, observed, token }) => {
    const firings = largeTransferFirings(legs);
    const events = oneEventPerTransaction(firings);
    expect(events).toHaveLength(1);
    expect(events[0]!.firing).toMatchObject({ reason, observed, dedupeKey: SIGNATURE, transactionSignature: SIGNATURE });
    expect(events[0]!.transaction.token).toBe(token);
    // The leg's own firing otherwise: its alert and dedupe key, one event per (alert, signature).
    expect(events[0]!.firing.alertId).toBe("alr_large_transfer");
  });

  it("leaves out a token whose legs did not cross: a lone crossing keeps its own leg's sentence, counterparty and all", () => {
    const firings = largeTransferFirings([bonk(2_000_000, false), sol(500, true)]);
    expect(firings).toHaveLength(1);
    expect(oneEventPerTransaction(firings)).toEqual(firings);
  });
});

describe("oneEventPerTransaction: legs of one token", () => {
  it.each([
    { case: "sent and received, the larger received", legs: [usdc(5_000, true), usdc(8_000, false)], kept: 1 },
    { case: "sent and received, the larger sent", legs: [usdc(8_000, false), usdc(9_000, true)], kept: 1 },
    { case: "sent and received alike: the sent one", legs: [usdc(5_000, false), usdc(5_000, true)], kept: 1 },
    { case: "native SOL and wrapped SOL are one token: the larger", legs: [sol(1_500, true, { mint: null }), sol(2_000, true, { to: OTHER })], kept: 1 },
    { case: "native SOL and wrapped SOL alike: the first", legs: [sol(2_000, true, { mint: null }), sol(2_000, true, { to: OTHER })], kept: 0 },
  ])("compares the amounts and keeps that leg's own firing: $case", ({ legs, kept }) => {
    const firings = largeTransferFirings(legs);
    expect(firings).toHaveLength(2);
    expect(oneEventPerTransaction(firings)).toEqual([firings[kept]]);
  });

  it("keeps a total over legs of one token and direction as the leg's own event: 'in 2 transfers'", () => {
    const firings = largeTransferFirings([usdc(6_000, false), usdc(6_000, false, { from: OTHER })], 10_000);
    const events = oneEventPerTransaction(firings);
    expect(events).toEqual([firings[0]]);
    expect(events[0]!.firing.observed).toBe(12_000);
    expect(events[0]!.firing.reason).toContain("in 2 transfers");
  });
});

describe("oneEventPerTransaction: suspicious_counterparty legs, unchanged", () => {
  const alert = rule("suspicious_counterparty");
  const leg = (to: string, amount: number, mint: string | null, score: number, k: number): LegFiring => {
    const transaction = tx({ to, amount, mint, token: mint === null ? "SOL" : "USDC", leg: k });
    const firing = evaluateSuspiciousCounterparty(alert, transaction, counterparty({ address: to, labelScore: score, labelCategory: "sanctioned" }))!;
    return { alert, firing, transaction };
  };

  it.each([
    { case: "the riskiest leg, whatever its token or amount", legs: [leg(OTHER, 1_000, MINTS.USDC, 80, 0), leg(THIRD, 50, null, 100, 1)], kept: 1 },
    { case: "the first in leg order among equal risks", legs: [leg(OTHER, 1_000, MINTS.USDC, 90, 0), leg(THIRD, 50, null, 90, 1)], kept: 0 },
  ])("$case", ({ legs, kept }) => {
    expect(oneEventPerTransaction(legs)).toEqual([legs[kept]]);
  });
});

describe("oneEventPerTransaction: events apart", () => {
  it("keeps one event per (alert, signature), in firing order, each where its first leg was", () => {
    const other: AlertRule = { ...rule("large_transfer", { threshold: 1_000 }), alertId: "alr_other" };
    const swap = largeTransferFirings([bonk(2_000_000, false), sol(10_000, true)]);
    const otherAlert = swap.map((f) => ({ ...f, alert: other, firing: { ...f.firing, alertId: other.alertId } }));
    const later = largeTransferFirings([usdc(3_000, true, { signature: "later" })]);
    const events = oneEventPerTransaction([...swap, ...otherAlert, ...later]);
    expect(events.map((e) => [e.firing.alertId, e.firing.dedupeKey, e.transaction.token])).toEqual([
      ["alr_large_transfer", SIGNATURE, "SOL"],
      ["alr_other", SIGNATURE, "SOL"],
      ["alr_large_transfer", "later", "USDC"],
    ]);
  });

  it("returns nothing for nothing", () => {
    expect(oneEventPerTransaction([])).toEqual([]);
  });
});
