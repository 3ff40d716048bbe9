// The reference model's reading of a Helius enhanced-transaction item as movements, from the
// README's "Helius enhanced webhooks" section only (not from src/ingest): one row per transfer,
// amount 0 included, leg 0 the principal one (picked among the non-zero transfers, among all
// only when every one is zero), the others in Helius's order (native, then token transfers), a
// token's plumbing (a token account's rent, a wrap a wrapped-SOL transfer shows, one's own
// account closed back to oneself) left out, an item with no transfer kept as 0 SOL from the fee
// payer to itself. Only the types the reference test sends
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

const WRAPPED_SOL = "So11111111111111111111111111111111111111112";

type Movement = Pick<ModelTx, "from" | "to" | "amount" | "token" | "mint">;

export function heliusLegs(item: HeliusItem): ModelTx[] {
  const type = ({ TRANSFER: "transfer", SWAP: "swap", NFT_SALE: "nft", STAKE_SOL: "stake" } as const)[item.type] ?? "other";
  // README ("A token's plumbing"): a native transfer into a token account the token transfers
  // name is plumbing while what is left out of the account stays within 0.01 SOL (its rent,
  // whoever's account it is) plus, when the sender is the account's only user, the wrapped SOL
  // its token transfers carry out of it to anyone else; past that it goes to the account's user
  // (another's account) or to the account itself (one's own, or one with no user or two). One
  // out of a token account is plumbing when it goes to the account's only user, and otherwise
  // comes from that user (the account itself when it has no user or two). Between two token
  // accounts: as into the second, sent by the first's user.
  type Account = { users: Set<string>; wrappedOut: Array<{ to: string; lamports: number }> };
  const accounts = new Map<string, Account>();
  const account = (address: string): Account => accounts.get(address) ?? accounts.set(address, { users: new Set(), wrappedOut: [] }).get(address)!;
  // An empty side is a mint or a burn: no account, or an account with no user.
  const name = (address: string, user: string) => {
    if (!address) return;
    const users = account(address).users;
    if (user) users.add(user);
  };
  for (const t of item.tokenTransfers) {
    name(t.fromTokenAccount, t.fromUserAccount);
    name(t.toTokenAccount, t.toUserAccount);
    // Wrapped SOL has 9 decimals: the test's amounts are whole lamports, which rounding keeps.
    if (t.mint === WRAPPED_SOL && t.fromTokenAccount) account(t.fromTokenAccount).wrappedOut.push({ to: t.toUserAccount, lamports: Math.round(t.tokenAmount * 1e9) });
  }
  const onlyUser = (a: Account | undefined) => (a !== undefined && a.users.size === 1 ? [...a.users][0] : undefined);
  const leftOut = new Map<string, number>();
  const solMovement = (from: string, to: string, lamports: number): Movement => ({ from, to, amount: lamports / 1e9, token: "SOL", mint: null });
  const natives: Movement[] = item.nativeTransfers.flatMap((t) => {
    const source = accounts.get(t.fromUserAccount);
    const target = accounts.get(t.toUserAccount);
    const sender = onlyUser(source) ?? t.fromUserAccount;
    if (target === undefined) {
      if (source !== undefined && onlyUser(source) === t.toUserAccount) return [];
      return [solMovement(sender, t.toUserAccount, t.amount)];
    }
    const owner = onlyUser(target);
    const wrapped = owner === sender ? target.wrappedOut.filter((w) => w.to !== owner).reduce((sum, w) => sum + w.lamports, 0) : 0;
    const total = (leftOut.get(t.toUserAccount) ?? 0) + t.amount;
    if (total <= 10_000_000 + wrapped) {
      leftOut.set(t.toUserAccount, total);
      return [];
    }
    return [solMovement(sender, owner !== undefined && owner !== sender ? owner : t.toUserAccount, t.amount)];
  });
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
