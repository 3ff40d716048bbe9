// The reference model's reading of a Helius enhanced-transaction item as movements, from the
// README's "Helius enhanced webhooks" section only (not from src/ingest): one row per non-zero
// transfer, leg 0 the principal one, the others in Helius's order (native, then token
// transfers), a token's plumbing left out, an item with no transfer kept as 0 SOL from the fee
// payer to itself. Only the types the reference test sends are read: TRANSFER, SWAP,
// NFT_SALE, STAKE_SOL, and anything else as `other`.
import type { ModelTx } from "./reference-model.ts";

export type HeliusItem = {
  signature: string;
  slot: number;
  timestamp: number;
  /** Lamports. */
  fee: number;
  feePayer: string;
  type: string;
  transactionError: unknown;
  nativeTransfers: Array<{ fromUserAccount: string; toUserAccount: string; amount: number }>;
  tokenTransfers: Array<{ fromUserAccount: string; toUserAccount: string; fromTokenAccount: string; toTokenAccount: string; mint: string; tokenAmount: number }>;
};

/** README: "Well-known mints are shown by symbol with mint set"; the test sends USDC only. */
const SYMBOLS = new Map([["EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v", "USDC"]]);

type Movement = Pick<ModelTx, "from" | "to" | "amount" | "token" | "mint">;

export function heliusLegs(item: HeliusItem): ModelTx[] {
  const type = ({ TRANSFER: "transfer", SWAP: "swap", NFT_SALE: "nft", STAKE_SOL: "stake" } as const)[item.type] ?? "other";
  // README: native transfers into or out of a token account the token transfers name are plumbing.
  const tokenAccounts = new Set(item.tokenTransfers.flatMap((t) => [t.fromTokenAccount, t.toTokenAccount]));
  const natives: Movement[] = item.nativeTransfers
    .filter((t) => t.amount > 0 && !tokenAccounts.has(t.fromUserAccount) && !tokenAccounts.has(t.toUserAccount))
    .map((t) => ({ from: t.fromUserAccount, to: t.toUserAccount, amount: t.amount / 1e9, token: "SOL", mint: null }));
  const tokens: Movement[] = item.tokenTransfers
    .filter((t) => t.tokenAmount > 0)
    .map((t) => ({ from: t.fromUserAccount, to: t.toUserAccount, amount: t.tokenAmount, token: SYMBOLS.get(t.mint) ?? t.mint, mint: t.mint }));
  const largest = (movements: Movement[]) => movements.reduce<Movement | undefined>((best, m) => (best === undefined || m.amount > best.amount ? m : best), undefined);
  const largestNative = largest(natives);
  // README: for a transfer, the first token transfer, else the largest native one; for a swap,
  // the fee payer's input leg; for an NFT trade, the largest native transfer, else the NFT
  // itself; otherwise the largest native transfer, else the first token transfer.
  const payerInput = tokens.find((m) => m.from === item.feePayer) ?? largest(natives.filter((m) => m.from === item.feePayer));
  const principal =
    type === "transfer"
      ? (tokens[0] ?? largestNative)
      : type === "swap"
        ? (payerInput ?? tokens[0] ?? largestNative)
        : (largestNative ?? tokens[0]);
  const movements = principal === undefined ? [] : [principal, ...natives.filter((m) => m !== principal), ...tokens.filter((m) => m !== principal)];
  if (movements.length === 0) movements.push({ from: item.feePayer, to: item.feePayer, amount: 0, token: "SOL", mint: null });
  return movements.map((m, leg) => ({
    signature: item.signature,
    leg,
    type,
    ...m,
    blockTime: item.timestamp,
    slot: item.slot,
    fee: item.fee / 1e9,
    status: item.transactionError != null ? "failed" : "success",
  }));
}
