// The reference model's reading of a Helius enhanced-transaction item as movements, from the
// README's "Helius enhanced webhooks" section only (not from src/ingest): one row per transfer,
// amount 0 included, leg 0 the principal one (picked among the non-zero transfers, among all
// only when every one is zero), the others in Helius's order (native, then token transfers), a
// token's plumbing (SOL serving its token account's own user) left out, an item with no
// transfer kept as 0 SOL from the fee payer to itself. Only the types the reference test sends
// are read: TRANSFER, SWAP, NFT_SALE, STAKE_SOL, and anything else as `other`; it sends no
// compressed NFTs.
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
  // README ("A token's plumbing"): a native transfer into a token account the token transfers
  // name is plumbing when the account's user sent it, one out of such an account when its user
  // receives it; any other is a movement with the account's user as that side. The test gives
  // every token account one user.
  const users = new Map(item.tokenTransfers.flatMap((t) => [[t.fromTokenAccount, t.fromUserAccount] as const, [t.toTokenAccount, t.toUserAccount] as const]));
  const holder = (account: string) => users.get(account) ?? account;
  const natives: Movement[] = item.nativeTransfers
    .filter((t) => !((users.has(t.fromUserAccount) || users.has(t.toUserAccount)) && holder(t.fromUserAccount) === holder(t.toUserAccount)))
    .map((t) => ({ from: holder(t.fromUserAccount), to: holder(t.toUserAccount), amount: t.amount / 1e9, token: "SOL", mint: null }));
  const tokens: Movement[] = item.tokenTransfers.map((t) => ({
    from: t.fromUserAccount,
    to: t.toUserAccount,
    amount: t.tokenAmount,
    token: SYMBOLS.get(t.mint) ?? t.mint,
    mint: t.mint,
  }));
  const largest = (movements: Movement[]) => movements.reduce<Movement | undefined>((best, m) => (best === undefined || m.amount > best.amount ? m : best), undefined);
  // README: for a transfer, the first token transfer, else the largest native one; for a swap,
  // the fee payer's input leg; for an NFT trade, the largest native transfer, else the NFT
  // itself; otherwise the largest native transfer, else the first token transfer. Among the
  // transfers that moved something, or among all when none did.
  const principalAmong = (nativeOnes: Movement[], tokenOnes: Movement[]) => {
    const largestNative = largest(nativeOnes);
    const payerInput = tokenOnes.find((m) => m.from === item.feePayer) ?? largest(nativeOnes.filter((m) => m.from === item.feePayer));
    return type === "transfer"
      ? (tokenOnes[0] ?? largestNative)
      : type === "swap"
        ? (payerInput ?? tokenOnes[0] ?? largestNative)
        : (largestNative ?? tokenOnes[0]);
  };
  const moved = (m: Movement) => m.amount > 0;
  const principal = principalAmong(natives.filter(moved), tokens.filter(moved)) ?? principalAmong(natives, tokens);
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
