// large_transfer's ignoreOwnWallets: a desk's own scheduled moves (the daily sweep from its hot
// wallet to its cold wallet, the treasury refilling its ops wallets) are not large transfers
// to watch; paged every day, they drown the one that is.
//
// Decisions:
// - "Own" is the alert's owner's: an address that the caller who owns the alert also tracks as
//   a wallet. Another caller tracking the same two wallets decides for its own alerts only.
// - As tracked at evaluation time: a wallet tracked later, or untracked since, is judged by the
//   tracking of the moment its transaction is evaluated (the pipeline looks it up per group).
// - Per leg: a leg whose other side is an own wallet is not judged, and is left out of the leg
//   totals of the wallet's other legs (legTotals); the rest of the transaction is judged as if
//   those legs were not in it. A windowed alert does not sum sends to own wallets either.
// - Received from an own wallet is the same move seen from the other side: left out too.
import { legTotals, movementOf, type LegTotal } from "./large-transfer.ts";
import type { Transaction } from "../types.ts";
import type { AlertRule } from "./types.ts";

/** Whether `address` is a wallet that `owner` tracks, as the evaluation looked it up. */
export type OwnWallets = (owner: string, address: string) => boolean;

/** Whether the rule leaves out its owner's wallets (and knows who its owner is). */
export function ignoresOwnWallets(rule: AlertRule): rule is AlertRule & { owner: string } {
  return rule.condition === "large_transfer" && rule.ignoreOwnWallets === true && rule.owner !== undefined;
}

/**
 * Whether the rule leaves this leg out: it ignores its owner's wallets and the leg's other side
 * (for the rule's wallet) is one. `own` absent: nothing looked up, nothing left out.
 */
export function isOwnLeg(rule: AlertRule, tx: Transaction, own: OwnWallets | undefined): boolean {
  if (own === undefined || !ignoresOwnWallets(rule)) return false;
  const movement = movementOf(rule.address, tx);
  return movement !== null && own(rule.owner, movement.counterparty);
}

/** legTotals of the rule's wallet over the legs, its legs to and from its owner's wallets left out (null for those). */
export function legTotalsWithoutOwn(rule: AlertRule, legs: readonly Transaction[], own: OwnWallets | undefined): Array<LegTotal | null> {
  return legTotals(rule.address, legs, (tx) => !isOwnLeg(rule, tx, own));
}

/** The set-based OwnWallets over (owner, address) pairs. */
export function ownWalletsOf(pairs: ReadonlyArray<{ owner: string; address: string }>): OwnWallets {
  const byOwner = new Map<string, Set<string>>();
  for (const { owner, address } of pairs) {
    const set = byOwner.get(owner);
    if (set) set.add(address);
    else byOwner.set(owner, new Set([address]));
  }
  return (owner, address) => byOwner.get(owner)?.has(address) === true;
}
