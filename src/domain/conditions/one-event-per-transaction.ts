// Several legs of one transaction can fire one alert under one dedupe key (the signature): the
// alert gets one event for them. Left to the unique index, the cooldown would first mark the
// later legs suppressed, and which of the rows Postgres keeps would decide whether anything is sent.
//
// Decisions:
// - Observed values are compared only where they are comparable. A risk is a risk whatever the
//   leg moved: a suspicious_counterparty event is its riskiest leg's (a payment of 1,000 USDC to
//   an exchange of risk 80 beside 50 SOL to a sanctioned address of risk 100 is the sanctioned
//   leg's), the first in leg order among equals; so are the other conditions' events (their legs
//   are alike). A large_transfer's amounts are compared within one token only: compared raw
//   across tokens, a swap of 10,000 SOL for 2,000,000 BONK read "Received 2,000,000 BONK … in a
//   swap", and the 10,000 SOL that left the wallet reached no channel.
// - large_transfer: each token's largest crossing leg (the wallet's total in that token and
//   direction: legTotals), the outgoing one among equals (then the first in leg order). Native
//   and wrapped SOL are one token here (a swap from SOL moves the same SOL as both).
// - When legs of more than one token cross, the reason names each, the wallet's outgoing side
//   first ("Sent 10,000 SOL and received 2,000,000 BONK in a swap (threshold 1,000)."), and the
//   event's `observed`, transaction and facts are those of the first named (the preferred leg:
//   what left the wallet is what its owner most needs to hear of). One token alone keeps its own
//   leg's reason, counterparty and all.
import { KIND, formatAmount, shortAddress } from "../reason.ts";
import { isSol, tokenOf, tokenShown } from "../tokens.ts";
import type { Transaction } from "../types.ts";
import { movementOf } from "./large-transfer.ts";
import type { AlertRule, Firing } from "./types.ts";

/** One leg's firing of an alert, with the leg that fired it. */
export type LegFiring = {
  alert: Pick<AlertRule, "address" | "condition" | "threshold">;
  firing: Firing;
  transaction: Transaction;
};

/**
 * One firing per (alert, dedupe key), in firing order (each where the first of its legs was:
 * the cooldown takes the events in the order they happened). A firing that stands alone is
 * returned as is; one made of several tokens' legs is a copy of its preferred leg's with the
 * reason that names them all.
 */
export function oneEventPerTransaction<F extends LegFiring>(firings: readonly F[]): F[] {
  const groups = new Map<string, F[]>();
  for (const candidate of firings) {
    const key = `${candidate.firing.alertId} ${candidate.firing.dedupeKey}`;
    const members = groups.get(key);
    if (members) members.push(candidate);
    else groups.set(key, [candidate]);
  }
  const eventAt = new Map<F, F>();
  for (const members of groups.values()) eventAt.set(members[0]!, eventOf(members));
  return firings.flatMap((candidate) => {
    const event = eventAt.get(candidate);
    return event === undefined ? [] : [event];
  });
}

function eventOf<F extends LegFiring>(members: readonly F[]): F {
  if (members.length === 1) return members[0]!;
  if (members[0]!.alert.condition !== "large_transfer") return strongest(members);
  const named = largestOfEachToken(members);
  if (named.length === 1) return named[0]!.leg;
  const preferred = named[0]!.leg;
  return { ...preferred, firing: { ...preferred.firing, reason: legsReason(named, preferred.alert.threshold) } };
}

/** The highest observed value, the first in leg order among equals. */
function strongest<F extends LegFiring>(members: readonly F[]): F {
  return members.reduce((held, candidate) => (candidate.firing.observed > held.firing.observed ? candidate : held));
}

type NamedLeg<F> = { leg: F; sent: boolean };

/** Each token's largest crossing leg (the outgoing one among equals), outgoing tokens first, then in leg order. */
function largestOfEachToken<F extends LegFiring>(members: readonly F[]): Array<NamedLeg<F>> {
  const byToken = new Map<string, NamedLeg<F>>();
  for (const leg of members) {
    const sent = movementOf(leg.alert.address, leg.transaction)?.direction === "sent";
    const key = tokenKey(leg.transaction);
    const held = byToken.get(key);
    const stronger =
      held === undefined ||
      leg.firing.observed > held.leg.firing.observed ||
      (leg.firing.observed === held.leg.firing.observed && sent && !held.sent);
    if (stronger) byToken.set(key, { leg, sent });
  }
  // Map order is each token's first leg; a stable sort keeps it within each direction.
  return [...byToken.values()].sort((a, b) => Number(b.sent) - Number(a.sent));
}

/** A token as amounts can be compared: its mint, SOL however it moved, or a symbol in any case (a cooldown digest's tokens too). */
export function tokenKey(tx: Pick<Transaction, "token" | "mint">): string {
  if (isSol(tx)) return "SOL";
  const token = tokenOf(tx);
  return "mint" in token ? `mint:${token.mint}` : `symbol:${token.symbol}`;
}

/**
 * "Sent 10,000 SOL and received 2,000,000 BONK in a swap (threshold 1,000).",
 * "Sent 10,000 SOL and 5,000 USDC, and received 2,000,000 BONK in a swap (threshold 1,000)."
 * No counterparty: the legs may have several, and the sentence must leave room in an SMS; the
 * payload's counterparty and transaction, and the email, name the preferred leg's in full.
 */
function legsReason<F extends LegFiring>(named: ReadonlyArray<NamedLeg<F>>, threshold: number): string {
  const amounts = (sent: boolean) =>
    named.filter((n) => n.sent === sent).map(({ leg }) => `${formatAmount(leg.firing.observed)} ${shortAddress(tokenShown(leg.transaction))}`);
  const [sent, received] = [amounts(true), amounts(false)];
  const parts = [
    ...(sent.length > 0 ? [`Sent ${inWords(sent)}`] : []),
    ...(received.length > 0 ? [`${sent.length > 0 ? "received" : "Received"} ${inWords(received)}`] : []),
  ];
  const movements = parts.join(sent.length > 1 ? ", and " : " and ");
  return `${movements}${KIND[named[0]!.leg.transaction.type]} (threshold ${formatAmount(threshold)}).`;
}

/** "a", "a and b", "a, b and c". */
function inWords(items: readonly string[]): string {
  return items.length <= 2 ? items.join(" and ") : `${items.slice(0, -1).join(", ")} and ${items.at(-1)!}`;
}
