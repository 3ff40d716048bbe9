// How a transaction enters an address's counterparties for new_counterparty_burst: the other
// side, and whether the address sent to it. Pure; the activity counters (src/pipeline/
// activity.lua) keep the remembered set and count the new ones.
//
// Decisions:
// - Only counterparties the address SENT to can be new. The factor is meant to catch a wallet
//   spraying funds to many fresh addresses (a peel chain, airdrop farming): something the
//   wallet does. Anyone can send it something: counting received transfers, ten 100-lamport
//   address-poisoning transfers from fresh addresses (0.000001 SOL in all) gave a wallet
//   new_counterparty_burst and paged the owners of its risk_score_increase alerts, and active
//   Solana wallets receive such dust waves daily.
// - A failed send counts: a failed send to a fresh address is still the wallet reaching out
//   (its signature, or a delegate it approved, is on it), and a spraying bot whose payments
//   fail (empty balance, congestion) is the same pattern. Retrying one payment counts once: the
//   address is remembered from the first attempt.
// - The memory of "dealt with before" holds every other side, received ones and failed
//   transactions included: paying back an address that paid the wallet (a redemption, a refund)
//   is not a new dealing, as it was not before this rule. Remembering only sent-to addresses
//   would keep dust out of the memory (a wave of over 1,000 fresh senders can push old payees
//   out at the hourly trim, and they count as new again), but would page a fund that redeems
//   ten investors within an hour. Pre-seeding the memory to hide a spray takes a funded
//   transaction from every destination to the wallet first.
// - The memory lasts 100 days after the address's last activity (src/pipeline/activity.ts), not
//   the 8 days of the other counters: a payroll paying the same payees every two weeks saw them
//   all as new each time. It is seeded from the stored history when the address becomes tracked
//   (src/pipeline/activity-seed.ts): the payees a wallet paid before are not new.
// - Within one transaction, a counterparty both sent to and received from counts as sent to (a
//   swap with a fresh pool is a dealing the wallet started); across transactions, chain order
//   decides (received from X, then sent to X: not new).
import { counterpartyOf } from "../conditions/suspicious-counterparty.ts";
import type { Transaction } from "../types.ts";

export type Dealing = {
  counterparty: string;
  /** The address sent this leg (a failed send too): the counterparty may count as new. */
  sentTo: boolean;
};

/** The other side of the leg for `address` and the direction; null for a self-transfer or when `address` is on neither side. */
export function dealingOf(address: string, tx: Transaction): Dealing | null {
  const counterparty = counterpartyOf(address, tx);
  return counterparty === null ? null : { counterparty, sentTo: tx.from === address };
}
