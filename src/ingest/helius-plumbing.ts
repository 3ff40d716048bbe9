// Native (SOL) transfers of a Helius item that go into or out of a token account: which are
// that token's plumbing (not stored), and between whom the others move SOL. Pure.
//
// A token account holds a token for its owner, the user Helius names beside it in a token
// transfer (toUserAccount for a toTokenAccount, fromUserAccount for a fromTokenAccount). SOL goes
// into one to pay its rent or to be wrapped (wrapped SOL), and comes out when it is closed or
// unwrapped. Those native transfers only show the token transfer a second time; anything more
// is SOL moved, and is stored. The rule:
//
//   into T (a token account the token transfers name), A lamports from F:
//     plumbing while what is taken as plumbing into T stays within RENT_ALLOWANCE (a token
//     account's rent, whoever's account it is), or, when T's only user is F, within
//     RENT_ALLOWANCE + the wrapped SOL the item's token transfers carry out of T to anyone but
//     F: a wrap that a token transfer shows leaving F;
//     otherwise a movement: to T's user u when T has one and u ≠ F (SOL into someone else's
//     account is theirs: suspicious_counterparty sees a sanctioned owner), else to T's own
//     address (one's own account beyond what a wrap explains; an account with no user, or with
//     two: its owner changed within the transaction).
//   out of T, to R:
//     plumbing when T's only user is R (one's own account closed or unwrapped back to oneself:
//     nothing left the owner); otherwise a movement from T's user u when it has one, else from
//     T's own address.
//
// Why amounts, and not only whose account it is. Until 2026-11-28 every native transfer into or
// out of a named token account was dropped: a hot wallet's 40,000 SOL sent into an attacker's
// token account beside a dust token transfer naming it was stored as nothing. The fix of that
// day judged by the owner Helius names, and a second review broke it three ways:
//   - the owner is not whoever can take the lamports. With the hot wallet's key the attacker
//     creates a token account owned by the hot wallet, makes himself its close authority, sends
//     40,000 SOL into it beside dust naming it, and later closes it to himself in a transaction
//     the hot wallet is not in. "Into one's own account" hid it all. Now nothing is hidden
//     beyond the rent and what a token transfer shows leaving: "Sent 40,000 SOL to <the
//     account>" fires and counts as SOL sent.
//   - an account given two users had both the SOL going in and the SOL coming out attributed
//     hot → attacker: 40,000 SOL stored and alerted as 80,000. Now the first is hot → the
//     account and the second the account → attacker, which is not the wallet's leg: counted once.
//   - the rent a payer puts into a recipient's new token account became a SOL leg to the
//     recipient, and for an item whose principal is its largest native transfer (a TOKEN_MINT
//     airdrop) that leg 0, shown first. A rent is plumbing again, whoever's account it is.
//
// RENT_ALLOWANCE is 0.01 SOL: above any token account's rent-exempt minimum (2,039,280 lamports
// for an SPL token account; Token-2022 accounts with extensions need somewhat more), and hiding
// at most that much per account is harmless. It is per account, not per native transfer, and so
// is the wrap's share: split into many native transfers, the SOL still shows past the bound.
// Wrapped SOL carried out to its own owner is not counted: wrapped into one of the owner's
// accounts and moved to another (whose close authority may be anyone's), it only looks like a
// self-transfer, which no alert fires on.
//
// Every native transfer of the published Helius examples (test/fixtures/helius) stays within
// these bounds: the launchpad buy wraps 0.2 SOL and sends 0.2 wSOL on, and its sell closes the
// account back to its owner (0.193335294 SOL).
import { plainDecimal } from "../domain/decimal.ts";
import { LAMPORTS_PER_SOL } from "../domain/risk/lamports.ts";
import { WRAPPED_SOL_MINT } from "../domain/tokens.ts";
import type { HeliusTokenTransfer } from "./helius.ts";

/** 0.01 SOL: the most taken as a token account's rent (and, for one's own account, beside the wrap a token transfer shows). */
export const RENT_ALLOWANCE_LAMPORTS = 10_000_000n;

/** A token account the token transfers name. */
type TokenAccount = {
  /** The users the token transfers give it, in their order (two when its owner changed within the transaction). */
  users: string[];
  /** The wrapped SOL they carry out of it, in lamports, each with the user it goes to (null: a burn). */
  wrappedOut: Array<{ to: string | null; lamports: bigint }>;
};

const named = (value: unknown): value is string => typeof value === "string" && value !== "";

/**
 * A token amount of wrapped SOL in lamports, exactly: the decimal it was sent as (a string's
 * digits, or a number's shortest form, which the route has checked is the literal sent), cut
 * to whole lamports, never rounded up.
 */
export function wrappedSolLamports(tokenAmount: number | string): bigint {
  const [whole = "0", fraction = ""] = plainDecimal(String(tokenAmount)).split(".");
  return BigInt(whole) * BigInt(LAMPORTS_PER_SOL) + BigInt(fraction.padEnd(9, "0").slice(0, 9));
}

function tokenAccounts(tokenTransfers: readonly HeliusTokenTransfer[]): Map<string, TokenAccount> {
  const accounts = new Map<string, TokenAccount>();
  const account = (address: string) => {
    let found = accounts.get(address);
    if (found === undefined) accounts.set(address, (found = { users: [], wrappedOut: [] }));
    return found;
  };
  const name = (address: unknown, user: string | null) => {
    // An empty token account is the missing side of a mint or a burn: no account at all.
    if (!named(address)) return;
    const users = account(address).users;
    if (named(user) && !users.includes(user)) users.push(user);
  };
  for (const t of tokenTransfers) {
    name(t.fromTokenAccount, t.fromUserAccount);
    name(t.toTokenAccount, t.toUserAccount);
    if (t.mint === WRAPPED_SOL_MINT && named(t.fromTokenAccount)) {
      account(t.fromTokenAccount).wrappedOut.push({ to: named(t.toUserAccount) ? t.toUserAccount : null, lamports: wrappedSolLamports(t.tokenAmount) });
    }
  }
  return accounts;
}

/** A token account's user when the token transfers give it exactly one. */
const soleUser = (account: TokenAccount): string | undefined => (account.users.length === 1 ? account.users[0] : undefined);

/** A native transfer's lamports, exactly: an integer on the wire (a fraction, which only a direct caller could pass, is rounded up: never hides more). */
const lamportsOf = (amount: number): bigint => BigInt(Math.ceil(amount));

export type NativeTransfer = { from: string; to: string; lamports: number };

/**
 * The sides each native transfer is stored with, in their order, or null for a token's plumbing
 * (see the top of this file). Judged in Helius's order: what is taken as plumbing into an account
 * uses up its allowance. A native transfer from one named token account into another is judged
 * as going into the second, sent by the first's user (the first's own address when it has none,
 * or two).
 */
export function nativeTransferSides(natives: readonly NativeTransfer[], tokenTransfers: readonly HeliusTokenTransfer[]): Array<{ from: string; to: string } | null> {
  const accounts = tokenAccounts(tokenTransfers);
  const hidden = new Map<string, bigint>();
  return natives.map(({ from, to, lamports }) => {
    const source = accounts.get(from);
    const sender = (source && soleUser(source)) ?? from;
    const target = accounts.get(to);
    if (target === undefined) {
      if (source === undefined) return { from, to };
      return soleUser(source) === to ? null : { from: sender, to };
    }
    const owner = soleUser(target);
    const wrapped = owner === sender ? target.wrappedOut.filter((out) => out.to !== owner).reduce((sum, out) => sum + out.lamports, 0n) : 0n;
    const total = (hidden.get(to) ?? 0n) + lamportsOf(lamports);
    if (total <= RENT_ALLOWANCE_LAMPORTS + wrapped) {
      hidden.set(to, total);
      return null;
    }
    return { from: sender, to: owner !== undefined && owner !== sender ? owner : to };
  });
}
