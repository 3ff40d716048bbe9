// Helius enhanced-transaction webhook items → our Transaction rows. Pure: no I/O, no clock.
//
// A Helius item describes one chain transaction with any number of native (SOL) and token
// transfers; our Transaction is a single from → to movement, unique by (signature, leg). So
// each item becomes one row per non-zero transfer: a payout from one account to fifty is
// fifty rows, and each receiver's alerts see its own. Leg 0 is the item's *principal*
// transfer, the one its type is about; the others follow in Helius's order (native transfers,
// then token transfers), every row carrying the item's type, time, fee and status. Native
// transfers that only serve a token transfer (wrapping SOL, a token account's rent) are not
// rows: see nativeLegs.
//
//   nft    the largest native transfer (the price going to the seller), else the first token
//          transfer (the NFT itself, amount 1, token = its mint).
//   swap   the fee payer's input leg — what the signing wallet gave up: the first token
//          transfer it sent, else the largest native transfer it sent; else as below.
//   token-first types (TRANSFER, STAKE_TOKEN, UNSTAKE_TOKEN): the first token transfer, else
//          the largest native transfer.
//   others the largest native transfer, else the first token transfer.
//   none   an item without any non-zero transfer (a failed transaction, a listing) is still
//          stored — its fee was paid, it is activity and, when failed, it feeds
//          failed_tx_ratio — as amount 0 SOL from the fee payer to the fee payer.
//
// Units: native lamports → SOL; tokenAmount is already in UI units; fee lamports → SOL;
// blockTime = timestamp. A side Helius leaves empty ("" or null) is the mint address for a
// token transfer (minted from / burned to the mint) and the fee payer for a native one.
import { isAddress, isSignature } from "../domain/base58.ts";
import type { Transaction, TransactionType } from "../domain/types.ts";

export type HeliusNativeTransfer = {
  fromUserAccount: string | null;
  toUserAccount: string | null;
  /** Lamports. */
  amount: number;
};

export type HeliusTokenTransfer = {
  fromUserAccount: string | null;
  toUserAccount: string | null;
  /** The token accounts the amount moved between; read only to tell plumbing (see nativeLegs). */
  fromTokenAccount?: unknown;
  toTokenAccount?: unknown;
  mint: string;
  /** UI units (decimals already applied). */
  tokenAmount: number;
};

/** The fields of an enhanced transaction we read; Helius sends many more, which we ignore. */
export type HeliusTransaction = {
  signature: string;
  slot: number;
  /** Unix seconds. */
  timestamp: number;
  /** Lamports. */
  fee: number;
  feePayer: string;
  type: string;
  transactionError?: unknown;
  nativeTransfers?: HeliusNativeTransfer[] | null;
  tokenTransfers?: HeliusTokenTransfer[] | null;
};

export const LAMPORTS_PER_SOL = 1_000_000_000;

/** Mainnet mints shown by symbol; any other token is shown by its mint. */
export const WELL_KNOWN_TOKENS = [
  // Wrapped SOL is SOL in the same units, so a "SOL" threshold covers both.
  { symbol: "SOL", mint: "So11111111111111111111111111111111111111112" },
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

const SYMBOL_BY_MINT: ReadonlyMap<string, string> = new Map(WELL_KNOWN_TOKENS.map((t) => [t.mint, t.symbol]));

export const tokenSymbol = (mint: string): string => SYMBOL_BY_MINT.get(mint) ?? mint;

const STAKE_TYPES = new Set(["STAKE_SOL", "UNSTAKE_SOL", "STAKE_TOKEN", "UNSTAKE_TOKEN"]);
const TOKEN_FIRST_TYPES = new Set(["TRANSFER", "STAKE_TOKEN", "UNSTAKE_TOKEN"]);

export function mapHeliusType(type: string): TransactionType {
  if (type === "TRANSFER") return "transfer";
  if (type === "SWAP") return "swap";
  if (STAKE_TYPES.has(type)) return "stake";
  if (type.startsWith("NFT_") || type.startsWith("COMPRESSED_NFT_")) return "nft";
  return "other";
}

type Leg = Pick<Transaction, "from" | "to" | "amount" | "token" | "mint">;

const present = (account: string | null): account is string => account !== null && account !== "";

/**
 * Native transfers into or out of a token account that the item's token transfers name are
 * that token's plumbing, not a movement between wallets: SOL wrapped into the payer's own
 * wrapped-SOL account, rent for a token account the transfer had to create, a closed account's
 * rent coming back. The token transfer is the movement; these would only repeat it as a second
 * "transfer" to an account nobody holds.
 */
function nativeLegs(item: HeliusTransaction): Leg[] {
  const tokenAccounts = new Set<unknown>();
  for (const t of item.tokenTransfers ?? []) tokenAccounts.add(t.fromTokenAccount).add(t.toTokenAccount);
  const plumbing = (account: string | null) => present(account) && tokenAccounts.has(account);
  return (item.nativeTransfers ?? [])
    .filter((t) => t.amount > 0 && !plumbing(t.fromUserAccount) && !plumbing(t.toUserAccount))
    .map((t) => ({
      from: present(t.fromUserAccount) ? t.fromUserAccount : item.feePayer,
      to: present(t.toUserAccount) ? t.toUserAccount : item.feePayer,
      amount: t.amount / LAMPORTS_PER_SOL,
      token: "SOL",
      mint: null,
    }));
}

function tokenLegs(item: HeliusTransaction): Leg[] {
  return (item.tokenTransfers ?? [])
    .filter((t) => t.tokenAmount > 0)
    .map((t) => ({
      from: present(t.fromUserAccount) ? t.fromUserAccount : t.mint,
      to: present(t.toUserAccount) ? t.toUserAccount : t.mint,
      amount: t.tokenAmount,
      token: tokenSymbol(t.mint),
      mint: t.mint,
    }));
}

/** The first of the largest: ties keep Helius's order. */
const largest = (legs: Leg[]): Leg | undefined =>
  legs.reduce<Leg | undefined>((best, leg) => (best === undefined || leg.amount > best.amount ? leg : best), undefined);

/** The item's movements, its principal one first; none when it moved nothing. */
function orderedLegs(item: HeliusTransaction, type: TransactionType): Leg[] {
  const natives = nativeLegs(item);
  const tokens = tokenLegs(item);
  const principal = principalAmong(item, type, natives, tokens);
  if (!principal) return [];
  return [principal, ...[...natives, ...tokens].filter((leg) => leg !== principal)];
}

/** One of `natives` or `tokens` (the very object, so the caller can tell it from the others). */
function principalAmong(item: HeliusTransaction, type: TransactionType, natives: Leg[], tokens: Leg[]): Leg | undefined {
  if (type === "swap") {
    const sent = (leg: Leg) => leg.from === item.feePayer;
    const input = tokens.find(sent) ?? largest(natives.filter(sent));
    if (input) return input;
  }
  if (type === "swap" || TOKEN_FIRST_TYPES.has(item.type)) return tokens[0] ?? largest(natives);
  return largest(natives) ?? tokens[0];
}

/** One item → its rows, leg 0 first (see the top of this file). */
export function mapHeliusTransaction(item: HeliusTransaction): Transaction[] {
  const type = mapHeliusType(item.type);
  const legs = orderedLegs(item, type);
  const nothingMoved: Leg = { from: item.feePayer, to: item.feePayer, amount: 0, token: "SOL", mint: null };
  const movements = legs.length > 0 ? legs : [nothingMoved];
  const status = item.transactionError === null || item.transactionError === undefined ? "success" : "failed";
  return movements.map((leg, index) => ({
    signature: item.signature,
    leg: index,
    type,
    ...leg,
    blockTime: item.timestamp,
    slot: item.slot,
    fee: item.fee / LAMPORTS_PER_SOL,
    status,
  }));
}

/**
 * One webhook delivery → rows, each item's legs in order. A signature repeated inside the
 * same delivery is mapped once and counted as skipped (replays across deliveries are the
 * store's duplicates).
 */
export function mapHeliusWebhook(items: readonly HeliusTransaction[]): { transactions: Transaction[]; skipped: number } {
  const seen = new Set<string>();
  const transactions: Transaction[] = [];
  for (const item of items) {
    if (seen.has(item.signature)) continue;
    seen.add(item.signature);
    transactions.push(...mapHeliusTransaction(item));
  }
  return { transactions, skipped: items.length - seen.size };
}

export type FieldIssue = { path: string; message: string };

const ADDRESS_MESSAGE = "must be a Solana address (base58 of 32 bytes)";

/**
 * What a JSON schema cannot say: the decoded byte lengths of signatures and addresses.
 * Paths are written as the HTTP layer writes schema errors (`body.3.feePayer`).
 */
export function heliusAddressIssues(items: readonly HeliusTransaction[], base = "body"): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const account = (path: string, value: string | null, optional: boolean) => {
    if (optional && !present(value)) return;
    if (value === null || !isAddress(value)) issues.push({ path, message: ADDRESS_MESSAGE });
  };
  items.forEach((item, i) => {
    const at = `${base}.${i}`;
    if (!isSignature(item.signature)) {
      issues.push({ path: `${at}.signature`, message: "must be a transaction signature (base58 of 64 bytes)" });
    }
    account(`${at}.feePayer`, item.feePayer, false);
    (item.nativeTransfers ?? []).forEach((t, j) => {
      account(`${at}.nativeTransfers.${j}.fromUserAccount`, t.fromUserAccount, true);
      account(`${at}.nativeTransfers.${j}.toUserAccount`, t.toUserAccount, true);
    });
    (item.tokenTransfers ?? []).forEach((t, j) => {
      account(`${at}.tokenTransfers.${j}.fromUserAccount`, t.fromUserAccount, true);
      account(`${at}.tokenTransfers.${j}.toUserAccount`, t.toUserAccount, true);
      account(`${at}.tokenTransfers.${j}.mint`, t.mint, false);
    });
  });
  return issues;
}
