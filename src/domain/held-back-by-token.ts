// Which of a cooldown's held-back firings its digest names. Pure.
//
// Decisions for an untokened large_transfer alert (as oneEventPerTransaction decides for one
// transaction's legs):
// - Amounts are compared within one token only. Ranked raw across tokens, an outsider's
//   1,000,000,000,000 units of a worthless mint were the digest's "largest", and the 50,000 SOL
//   the wallet sent in the same cooldown reached no channel of that alert.
// - A received transfer never displaces a sent one: anyone can send the wallet anything, only
//   its key can send from it. A token's named firing is its largest sent one, or its largest
//   received one when the wallet sent none of it; tokens with a sent firing come first.
// - Within each of those two groups, the well-known tokens (domain/tokens.ts: SOL, USDC…, by
//   their mints) first: anyone can mint a token, so a key holder who sent three of his own
//   first pushed the SOL drain that followed out of the three named (evasion review,
//   2026-11-28). Then tokens in the order their named direction was first held back (a
//   transaction's legs keep leg order), so that nothing about the amounts decides it.
// - At most TOKENS_NAMED tokens are named; the rest are counted. An SMS has room for one.
// Every other alert's digest, a large_transfer one with a token filter among them, names its one
// highest firing (the highest observed, the first among equals) and no list: a filter's amounts
// are all of its token, so comparable, and a receipt of a real token costs its sender what it
// says. Named sent-first, a SOL alert's 100,000 SOL receipt reached no channel and its digest
// called a 1,001 SOL send the "largest" (diff review, 2026-11-28).
import { tokenKey } from "./conditions/one-event-per-transaction.ts";
import { tokenOf, wellKnownSymbol } from "./tokens.ts";
import type { Condition, Transaction } from "./types.ts";

/** The most tokens a digest names; the others are counted ("and 2 more tokens"). */
export const TOKENS_NAMED = 3;

/** A held-back large_transfer firing, with what its transaction's legs say it moved. */
export type TokenFiring = {
  eventId: string;
  observed: number;
  /** ISO 8601. */
  createdAt: string;
  /** Whether the wallet sent it (else received it). */
  sent: boolean;
  /** The token its legs name; null when they cannot be found: then a token of its own, compared with nothing. */
  token: Pick<Transaction, "token" | "mint"> | null;
  /** When the first firing of its token and direction was held back (itself, unless given earlier). */
  firstAt?: string;
};

export type NamedTokens<F> = { named: F[]; otherTokens: number };

/** An alert as the choice needs it: its condition, and its token filter (null: any token). */
export type DigestedAlert = { condition: Condition; token: string | null };

/** Whether the digest names each token's largest firing: an untokened large_transfer alert's only. */
export function namesEachToken(alert: DigestedAlert): boolean {
  return alert.condition === "large_transfer" && alert.token === null;
}

/**
 * What a digest names: an untokened large_transfer's, each token's largest (largestOfEachToken
 * over `tokenBests`, each token's and direction's largest), `strongest` the first of them; any
 * other alert's, `highest` alone (the highest observed, or score reached, the first among equals).
 */
export function namedHeldBack<H, F extends TokenFiring>(
  alert: DigestedAlert,
  highest: H,
  tokenBests: readonly F[],
): { strongest: H | F; byToken?: NamedTokens<F> } {
  if (!namesEachToken(alert) || tokenBests.length === 0) return { strongest: highest };
  const byToken = largestOfEachToken(tokenBests);
  return { strongest: byToken.named[0]!, byToken };
}

type Held<F> = { firing: F; firstAt: number };

/** Whether a firing moved a well-known token: one no one can mint at will, so named before the others. */
const movesWellKnown = (firing: TokenFiring): boolean => {
  if (firing.token === null) return false;
  const token = tokenOf(firing.token);
  return "mint" in token && wellKnownSymbol(token.mint) !== undefined;
};

/** Each token's largest firing, sent tokens first, at most `limit`; and how many tokens were left out. */
export function largestOfEachToken<F extends TokenFiring>(firings: readonly F[], limit: number = TOKENS_NAMED): NamedTokens<F> {
  // Per token, the largest of each direction (the first among equals) and its first time.
  const byToken = new Map<string, { sent?: Held<F>; received?: Held<F> }>();
  for (const firing of firings) {
    const key = firing.token === null ? `event:${firing.eventId}` : tokenKey(firing.token);
    const sides = byToken.get(key) ?? {};
    const side = firing.sent ? "sent" : "received";
    const held = sides[side];
    const firstAt = Math.min(Date.parse(firing.firstAt ?? firing.createdAt), Date.parse(firing.createdAt));
    sides[side] = {
      firing: held === undefined || isLarger(firing, held.firing) ? firing : held.firing,
      firstAt: held === undefined ? firstAt : Math.min(held.firstAt, firstAt),
    };
    byToken.set(key, sides);
  }
  const named = [...byToken.values()]
    .map((sides) => (sides.sent ?? sides.received)!)
    .sort(
      (a, b) =>
        Number(b.firing.sent) - Number(a.firing.sent) ||
        Number(movesWellKnown(b.firing)) - Number(movesWellKnown(a.firing)) ||
        a.firstAt - b.firstAt ||
        compareIds(a.firing, b.firing),
    )
    .map((held) => held.firing);
  return { named: named.slice(0, limit), otherTokens: Math.max(0, named.length - limit) };
}

/** A larger amount; among equals, the earlier firing. */
function isLarger(candidate: TokenFiring, held: TokenFiring): boolean {
  if (candidate.observed !== held.observed) return candidate.observed > held.observed;
  const [at, heldAt] = [Date.parse(candidate.createdAt), Date.parse(held.createdAt)];
  return at !== heldAt ? at < heldAt : compareIds(candidate, held) < 0;
}

// Ids made in one millisecond count up (ids.ts): their order is the order they were recorded in.
const compareIds = (a: TokenFiring, b: TokenFiring) => (a.eventId < b.eventId ? -1 : a.eventId > b.eventId ? 1 : 0);
