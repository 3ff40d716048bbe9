// Helius enhanced-transaction webhook items → our Transaction rows. Pure: no I/O, no clock.
//
// A Helius item describes one chain transaction with any number of native (SOL) transfers,
// token transfers and compressed-NFT events; our Transaction is a single from → to movement,
// unique by (signature, leg). So each item becomes one row per movement it names: a payout
// from one account to fifty is fifty rows, and each receiver's alerts see its own. Leg 0 is
// the item's *principal* movement, the one its type is about; the others follow in Helius's
// order (native transfers, token transfers, then compressed-NFT events), every row carrying
// the item's type, time, fee and status. Native transfers that only serve a token transfer (a
// token account's rent, SOL wrapped into one's own token account and sent on as wrapped SOL,
// one's own account closed back to oneself) are not rows: see helius-plumbing.ts, which also
// says how far each may go.
//
// A transfer of amount 0 is a movement too: it has two real sides, and a 0 SOL transfer from
// a scam address to a wallet (address poisoning) is exactly what the counterparty checks are
// for — POST /v1/ingest/transactions stores it as sent, and so do we. A self-transfer is kept
// as well, as native ingest keeps it. A zero amount only never becomes the principal while
// the item moved something: the rules below pick among the non-zero movements first, and
// among all of them only when every one is zero.
//
//   nft    the largest native transfer (the buyer's payment: in Helius's documented sale, into
//          the marketplace's escrow, which pays the seller in a leg of its own), else the first
//          token transfer or compressed NFT (the NFT itself, amount 1, token = its mint or asset id).
//   swap   the fee payer's input leg — what the signing wallet gave up: the first token
//          transfer it sent, else the largest native transfer it sent; else as below.
//   token-first types (TRANSFER, STAKE_TOKEN, UNSTAKE_TOKEN): the first token transfer, else
//          the largest native transfer.
//   others the largest native transfer, else the first token transfer.
//   none   an item that names no movement at all (a failed transaction, a listing) is still
//          stored — its fee was paid, it is activity and, when failed, it feeds
//          failed_tx_ratio — as amount 0 SOL from the fee payer to the fee payer. A failed item
//          that names transfers (Helius lists the ones the transaction tried) is stored with
//          them, failed: the attempt, which large_transfer and the SOL-sent counters pass over.
//
// A compressed NFT (events.compressed[]) has no token account and no token transfer: Helius
// reports it as a change of the leaf owner in a Merkle tree. It is a movement of 1 of its
// asset id from the old owner (the tree, for a mint) to the new one (the tree, for a burn).
//
// Units: native lamports → SOL; tokenAmount is already in UI units (a number, or a decimal
// string: Helius's SDK types it as either); fee lamports → SOL; blockTime = timestamp. Every
// token amount is kept to the last digit or its item refused (heliusItemAmountIssues, in
// helius-issues.ts); lamports are kept whatever their size. A side Helius leaves empty ("" or
// null) is the mint address for a token transfer (minted from / burned to the mint). A native
// transfer has no such stand-in: an item with an empty native side is refused before it is
// mapped (heliusItemAddressIssues), not stored with a side guessed.
import { wellKnownSymbol } from "../domain/tokens.ts";
import type { Transaction, TransactionType } from "../domain/types.ts";
import { nativeTransferSides } from "./helius-plumbing.ts";

export type HeliusNativeTransfer = {
  fromUserAccount: string | null;
  toUserAccount: string | null;
  /** Lamports. */
  amount: number;
};

export type HeliusTokenTransfer = {
  fromUserAccount: string | null;
  toUserAccount: string | null;
  /** The token accounts the amount moved between; read only to tell plumbing (helius-plumbing.ts). */
  fromTokenAccount?: unknown;
  toTokenAccount?: unknown;
  mint: string;
  /** UI units (decimals already applied); a decimal string in some deliveries. */
  tokenAmount: number | string;
};

/** One entry of `events.compressed`: a compressed NFT's leaf changing owner (or being minted, burned). */
export type HeliusCompressedNftEvent = {
  /** The Merkle tree holding the NFT: the missing side of a mint or a burn. */
  treeId: string;
  assetId: string;
  /** Absent ("" or null) for a mint. */
  oldLeafOwner?: string | null;
  /** Absent ("" or null) for a burn. */
  newLeafOwner?: string | null;
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
  /**
   * Helius's parsed events; only the compressed-NFT ones are read (compressedNftEvents). `[]` is
   * how Helius's webhooks say "none" in some deliveries, where others send `{}`.
   */
  events?: { compressed?: HeliusCompressedNftEvent[] | null } | [] | null;
};

/** The item's compressed-NFT events; none when `events` is absent, null or `[]`. */
export const compressedNftEvents = (item: HeliusTransaction): readonly HeliusCompressedNftEvent[] =>
  (Array.isArray(item.events) ? null : item.events?.compressed) ?? [];

export const LAMPORTS_PER_SOL = 1_000_000_000;

export const tokenSymbol = (mint: string): string => wellKnownSymbol(mint) ?? mint;

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

/** Whether Helius named the account: it leaves a side empty as "" or null. */
export const present = (account: string | null | undefined): account is string =>
  account !== null && account !== undefined && account !== "";

/**
 * The item's native transfers as legs, less a token's plumbing; one into or out of a token
 * account beyond it is a leg to or from that account's user, or the account itself
 * (helius-plumbing.ts).
 */
function nativeLegs(item: HeliusTransaction): Leg[] {
  const natives = item.nativeTransfers ?? [];
  const sides = nativeTransferSides(
    natives.map((t) => ({ from: namedSide(item, t.fromUserAccount), to: namedSide(item, t.toUserAccount), lamports: t.amount })),
    item.tokenTransfers ?? [],
  );
  return natives.flatMap((t, i) => {
    const between = sides[i];
    if (!between) return [];
    // The double nearest the exact quotient: the SOL decimal itself below 2^23 SOL, within a
    // lamport or two above (kept, not refused: see heliusItemAmountIssues).
    return [{ ...between, amount: t.amount / LAMPORTS_PER_SOL, token: "SOL", mint: null }];
  });
}

/**
 * A native transfer's side. The route refuses an item with an empty one (heliusItemAddressIssues):
 * the fee payer stood in for it until 2026-11-28, and 10,000 SOL from the payer to an account
 * Helius did not name was stored as the payer's transfer to itself.
 */
function namedSide(item: HeliusTransaction, side: string | null): string {
  if (!present(side)) throw new Error(`Helius item ${item.signature}: a native transfer with an empty side reached the mapping; the route refuses such an item`);
  return side;
}

function tokenLegs(item: HeliusTransaction): Leg[] {
  return (item.tokenTransfers ?? []).map((t) => ({
    from: present(t.fromUserAccount) ? t.fromUserAccount : t.mint,
    to: present(t.toUserAccount) ? t.toUserAccount : t.mint,
    amount: uiAmount(t.tokenAmount),
    token: tokenSymbol(t.mint),
    mint: t.mint,
  }));
}

/**
 * The route lets a string through only when it is digits with an optional fraction, and only
 * when a double holds it exactly (heliusItemAmountIssues): an amount is judged as a number, and
 * "9.99999999999999999" read as 10 fired a large_transfer at 10 that was never reached. A number
 * is let through on the same terms, judged by the literal it was sent as.
 */
const uiAmount = (amount: number | string): number => (typeof amount === "number" ? amount : Number(amount));

/** A compressed NFT moves whole, as an NFT's token transfer does: 1 of it, shown by its asset id. */
function compressedNftLegs(item: HeliusTransaction): Leg[] {
  return compressedNftEvents(item).map((event) => ({
    from: present(event.oldLeafOwner) ? event.oldLeafOwner : event.treeId,
    to: present(event.newLeafOwner) ? event.newLeafOwner : event.treeId,
    amount: 1,
    token: tokenSymbol(event.assetId),
    mint: event.assetId,
  }));
}

/** The first of the largest: ties keep Helius's order. */
const largest = (legs: Leg[]): Leg | undefined =>
  legs.reduce<Leg | undefined>((best, leg) => (best === undefined || leg.amount > best.amount ? leg : best), undefined);

const moved = (leg: Leg) => leg.amount > 0;

/** The item's movements, its principal one first; none when it names no movement. */
function orderedLegs(item: HeliusTransaction, type: TransactionType): Leg[] {
  const natives = nativeLegs(item);
  // A compressed NFT counts as a token transfer (it is one, of a token without an account).
  const tokens = [...tokenLegs(item), ...compressedNftLegs(item)];
  const principal =
    principalAmong(item, type, natives.filter(moved), tokens.filter(moved)) ?? principalAmong(item, type, natives, tokens);
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
