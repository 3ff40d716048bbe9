// Which token a transaction moves, as the alerts tell tokens apart. A symbol is whatever a
// token's creator called it, so it names a token only where no mint says otherwise: a
// transaction that carries a mint is that mint's token, whatever symbol it shows (a worthless
// token calling itself "SOL" or "USDC" is neither). The well-known mints' symbols name those
// mints, so a filter "usdc" is the USDC mint, and a transaction that says USDC with no mint
// (native ingest that gave none) is taken at its word. Any other symbol can only be compared
// as a symbol, in any letter case. Wrapped SOL is SOL in the same units, moved through a token
// account: SOL, however it is spelt (WSOL too), is the wrapped-SOL mint here.
import { isAddress } from "./base58.ts";
import { shortAddress } from "./reason.ts";
import type { Transaction } from "./types.ts";

export const WRAPPED_SOL_MINT = "So11111111111111111111111111111111111111112";

/** Mainnet mints shown by symbol; any other token is shown by its mint. */
export const WELL_KNOWN_TOKENS = [
  { symbol: "SOL", mint: WRAPPED_SOL_MINT },
  { symbol: "USDC", mint: "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v" },
  { symbol: "USDT", mint: "Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB" },
  { symbol: "BONK", mint: "DezXAZ8z7PnrnRJjz3wXBoRgixCa6xjnB7YaB1pPB263" },
  { symbol: "JUP", mint: "JUPyiwrYJFskUPiHa7hkeR8VUtAeFoSYbKedZNsDvCN" },
  { symbol: "mSOL", mint: "mSoLzYCxHdYgdzU16g5QSh3i5K3z3KZK7ytfqcJm7So" },
  { symbol: "JitoSOL", mint: "J1toso1uCk3RLmjorhTtrVwY9HJ7X8V9yYac6Y7kGCPn" },
  { symbol: "WIF", mint: "EKpQGSJtjMFqKZ9KQanSqYXRcF8fBopzLHYxdM65zcjm" },
  { symbol: "RAY", mint: "4k3Dyjzvzp8eMZWUXbBCjEvwSkkk59S5iCNLY3QrkX6R" },
  { symbol: "PYTH", mint: "HZ1JovNiVvGrGNiiYvEozEVgZ58xaU3RKwX8eACQBCt3" },
  { symbol: "JTO", mint: "jtojtomepa8beP8AuQc6eXt5FriJwfFMwQx2v2f9mCL" },
] as const;

/** Other names of well-known mints: wrapped SOL is SOL, and many wallets and explorers call it WSOL. */
const SYMBOL_ALIASES = [{ symbol: "WSOL", mint: WRAPPED_SOL_MINT }] as const;

/** A token known by its mint (exact: base58 is case-sensitive), or only by a symbol (lower-cased). */
export type TokenIdentity = { mint: string } | { symbol: string };

const MINT_BY_SYMBOL: ReadonlyMap<string, string> = new Map(
  [...WELL_KNOWN_TOKENS, ...SYMBOL_ALIASES].map((t) => [t.symbol.toLowerCase(), t.mint]),
);

/** Whether a name is a well-known symbol (or one of its aliases), in any letter case. */
export const isWellKnownSymbol = (name: string): boolean => MINT_BY_SYMBOL.has(name.toLowerCase());

/** The token a name stands for: a mint as itself, a well-known symbol as its mint, any other symbol as a symbol. */
export function tokenNamed(name: string): TokenIdentity {
  let identity = NAMED.get(name);
  if (identity === undefined) {
    identity = identify(name);
    if (NAMED.size >= MAX_NAMED) NAMED.clear();
    NAMED.set(name, identity);
  }
  return identity;
}

// An alert's filter is named again for every transaction it looks at, and telling a mint from
// a symbol decodes base58 (about 2 µs for a mint): the few names in use are remembered.
const NAMED = new Map<string, TokenIdentity>();
const MAX_NAMED = 10_000;

function identify(name: string): TokenIdentity {
  if (isAddress(name)) return { mint: name };
  const known = MINT_BY_SYMBOL.get(name.toLowerCase());
  return known ? { mint: known } : { symbol: name.toLowerCase() };
}

/** The token a transaction moves: its mint when it names one, else what its token says. */
export function tokenOf(tx: Pick<Transaction, "token" | "mint">): TokenIdentity {
  return tx.mint != null ? { mint: tx.mint } : tokenNamed(tx.token);
}

/**
 * Whether a transaction moves the token a filter names. A filter known only by a symbol is
 * compared with the symbol the transaction shows (its mint, if any, cannot be checked);
 * a transaction shown by its mint has no symbol to compare.
 */
export function movesToken(filter: TokenIdentity, tx: Pick<Transaction, "token" | "mint">): boolean {
  if ("mint" in filter) {
    const moved = tokenOf(tx);
    return "mint" in moved && moved.mint === filter.mint;
  }
  return !isAddress(tx.token) && tx.token.toLowerCase() === filter.symbol;
}

/** Whether the transaction moves SOL or wrapped SOL (never a token of another mint that calls itself SOL). */
export const isSol = (tx: Pick<Transaction, "token" | "mint">): boolean => {
  const moved = tokenOf(tx);
  return "mint" in moved && moved.mint === WRAPPED_SOL_MINT;
};

const SYMBOL_BY_MINT: ReadonlyMap<string, string> = new Map(WELL_KNOWN_TOKENS.map((t) => [t.mint, t.symbol]));

/** The symbol of a well-known mint ("USDC" for EPjF…Dt1v); undefined for any other. */
export const wellKnownSymbol = (mint: string): string | undefined => SYMBOL_BY_MINT.get(mint);

/** A symbol shown as given: letters, digits, `$`, `_` and `-`, at most 12 (JitoSOL, $WIF). */
const PLAIN_SYMBOL = /^[A-Za-z0-9$_-]{1,12}$/;

/** What a sentence shows for a symbol it will not repeat: it stays in the payload's `transaction.token`. */
export const UNLISTED_TOKEN = "(unlisted)";

/**
 * The token of a transaction as a notification names it to a person: a well-known mint by its
 * symbol, any other mint by its address shortened (`7xKX…9fQa`), and a symbol with no mint (a
 * native ingest that gave none) as given when it is plain, else UNLISTED_TOKEN. A symbol is
 * whatever the token's creator chose: shown as given, a token of another mint calling itself
 * "USDC" read "Received 5,000,000 USDC" (the fake-deposit scam, sent by the desk's own alerts),
 * and one calling itself "bit.ly/3xYzA" or "verify at phantom-help.app" put its link in the SMS.
 */
export function tokenShown(tx: Pick<Transaction, "token" | "mint">): string {
  const token = tokenOf(tx);
  if ("mint" in token) {
    return wellKnownSymbol(token.mint) ?? shortAddress(token.mint);
  }
  return PLAIN_SYMBOL.test(tx.token) ? tx.token : UNLISTED_TOKEN;
}
