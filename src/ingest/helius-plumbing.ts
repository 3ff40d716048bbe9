// Native (SOL) transfers of a Helius item that go into or out of a token account: which are
// that token's plumbing, and between whom the others move SOL. Pure.
//
// A token account holds a token for its owner, the user Helius names beside it in a token
// transfer (toUserAccount for a toTokenAccount, fromUserAccount for a fromTokenAccount). SOL
// goes into one to be wrapped (wrapped SOL) or to pay its rent, and comes out when it is closed.
// When that SOL comes from the account's own user, or goes back to that user, nobody else got
// it: the token transfer is the movement, and the native one would only show it twice. Any
// other native transfer into or out of a token account moves SOL between two holders: it is
// stored with the account's user as that side (the account itself when no token transfer
// gives it a user), whatever its amount and whatever the token transfer beside it moved.
//
// Until 2026-11-28 every native transfer into or out of a token account that some token
// transfer of the item named was dropped, whoever held the account. A security review sent
// 40,000 SOL from a tracked wallet into an attacker's token account, beside a dust token
// transfer naming that account, and nothing was stored: no row, no alert, no score change,
// even with the attacker labelled sanctioned. The attacker then closes the account (or unwraps
// the SOL) and takes every lamport.
//
// So the rent a payer puts into a new token account of someone else is now a small SOL leg to
// that someone: it is theirs, they get it back by closing the account.
import type { HeliusTokenTransfer } from "./helius.ts";

/** Each token account the token transfers name, with the users they give it, in their order. */
export type TokenAccountUsers = ReadonlyMap<string, readonly string[]>;

export function tokenAccountUsers(tokenTransfers: readonly HeliusTokenTransfer[]): TokenAccountUsers {
  const users = new Map<string, string[]>();
  const name = (account: unknown, user: string | null) => {
    // An empty token account is the missing side of a mint or a burn: no account at all.
    if (typeof account !== "string" || account === "") return;
    const named = users.get(account) ?? [];
    if (user !== null && user !== "" && !named.includes(user)) named.push(user);
    users.set(account, named);
  };
  for (const t of tokenTransfers) {
    name(t.fromTokenAccount, t.fromUserAccount);
    name(t.toTokenAccount, t.toUserAccount);
  }
  return users;
}

/** Who holds one side of a native transfer: a token account's users (itself when none is named); any other account, itself. */
const holdersOf = (side: string, users: TokenAccountUsers): readonly string[] => {
  const named = users.get(side);
  return named !== undefined && named.length > 0 ? named : [side];
};

/**
 * The sides a native transfer between `from` and `to` is stored with, or null when it is a
 * token's plumbing: into a token account from its own user, or out of one to its own user.
 *
 * A token account the token transfers give two users (its owner changed within the
 * transaction) is never plumbing: the SOL is shown between the holders that differ, rather
 * than lost on the word of either.
 */
export function nativeSides(from: string, to: string, users: TokenAccountUsers): { from: string; to: string } | null {
  const senders = holdersOf(from, users);
  const receivers = holdersOf(to, users);
  const touchesTokenAccount = users.has(from) || users.has(to);
  if (touchesTokenAccount && new Set([...senders, ...receivers]).size === 1) return null;
  const sender = senders.find((holder) => !receivers.includes(holder)) ?? senders[0]!;
  return { from: sender, to: receivers.find((holder) => holder !== sender) ?? receivers[0]! };
}
