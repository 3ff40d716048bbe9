// Which other side a cooldown digest names in full for its strongest firing
// (pipeline/digest-counterparty.ts namedCounterparty): the one its reason names, among the
// legs of its transaction, or none rather than a guess.
import { describe, expect, it } from "vitest";
import { largeTransferReason, suspiciousCounterpartyReason, type MovementFacts } from "../../src/domain/reason.ts";
import { namedCounterparty } from "../../src/pipeline/digest-counterparty.ts";

const WALLET = "7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU";
const SANCTIONED = "6R9jQiXJ3vKmTz8WqB5nP2dLs7cYhE4uGaF1oNrkFJqLF";
/** Ground to share SANCTIONED's first and last 6 characters: what address poisoning makes. */
const LOOKALIKE = "6R9jQiAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAkFJqLF";
const EXCHANGE = "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM";

const sent = (counterparty: string, more: Partial<MovementFacts> = {}): MovementFacts => ({
  direction: "sent",
  failed: false,
  amount: 250_000,
  token: "SOL",
  counterparty,
  type: "transfer",
  ...more,
});

describe("the counterparty a digest names for its strongest firing", () => {
  it("is the other side of the wallet's leg, sent or received", () => {
    const reason = largeTransferReason(sent(SANCTIONED), 1_000, "sanctioned");
    expect(namedCounterparty(WALLET, reason, [{ from: WALLET, to: SANCTIONED }])).toBe(SANCTIONED);
    const received = largeTransferReason(sent(SANCTIONED, { direction: "received" }), 1_000);
    expect(namedCounterparty(WALLET, received, [{ from: SANCTIONED, to: WALLET }])).toBe(SANCTIONED);
  });

  it("is the leg its reason names, when the transaction has legs with other sides", () => {
    // A payment of 1,000 USDC to an exchange beside 50 SOL to a sanctioned address: the event is the sanctioned leg's.
    const reason = suspiciousCounterpartyReason(sent(SANCTIONED, { amount: 50 }), 100, "sanctioned", 75);
    const legs = [
      { from: WALLET, to: EXCHANGE },
      { from: WALLET, to: SANCTIONED },
    ];
    expect(namedCounterparty(WALLET, reason, legs)).toBe(SANCTIONED);
  });

  it("is none when the reason names no side (several tokens' legs), or two alike: never a guess shown in full", () => {
    const swap = "Sent 10,000 SOL and received 2,000,000 BONK in a swap (threshold 1,000).";
    expect(namedCounterparty(WALLET, swap, [{ from: WALLET, to: EXCHANGE }, { from: SANCTIONED, to: WALLET }])).toBeUndefined();
    const reason = largeTransferReason(sent(SANCTIONED), 1_000);
    expect(namedCounterparty(WALLET, reason, [{ from: WALLET, to: SANCTIONED }, { from: WALLET, to: LOOKALIKE }])).toBeUndefined();
    // The transaction no longer stored.
    expect(namedCounterparty(WALLET, reason, [])).toBeUndefined();
    // A leg to the wallet itself names nobody.
    expect(namedCounterparty(WALLET, "Sent 5 SOL to 7xKXtg…osgAsU (threshold 1).", [{ from: WALLET, to: WALLET }])).toBeUndefined();
  });
});
