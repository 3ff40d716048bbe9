// Account snapshots: an address's SOL balance, token accounts and NFTs as last reported.
// A snapshot replaces the address's lists whole, and the counts in address_state (read by
// GET /wallets without touching the lists) are set in the same transaction. Numbers travel as
// text[] (see insertTransactionBatch for why).
import type { AccountSnapshot } from "../../ingest/native.ts";
import type { Sql } from "../client.ts";

/**
 * Replaces the snapshot of every given address in one transaction. `accounts` must be
 * ordered by address with no address twice: address_state rows are locked first and in
 * that order, so concurrent snapshots of the same addresses queue instead of deadlocking.
 *
 * snapshot_at (the wallets' balanceAsOf) is the clock when the row is written, under its lock,
 * not now() (the transaction's start): of two snapshots of an address, the one stored last,
 * whose figures are shown, has the later time even when its transaction began first.
 */
export async function replaceAccountSnapshots(sql: Sql, accounts: readonly AccountSnapshot[]): Promise<void> {
  const addresses = accounts.map((account) => account.address);
  const tokens = accounts.flatMap((account) => account.tokenAccounts.map((token) => ({ address: account.address, ...token })));
  const nfts = accounts.flatMap((account) => account.nfts.map((nft) => ({ address: account.address, ...nft })));

  await sql.begin(async (tx) => {
    await tx`
      insert into address_state (address, balance, token_account_count, nft_count, snapshot_at)
      select s.*, clock_timestamp() from unnest(
        ${addresses}::text[], ${accounts.map((a) => String(a.balance))}::text[]::numeric[],
        ${accounts.map((a) => a.tokenAccounts.length)}::int[], ${accounts.map((a) => a.nfts.length)}::int[]) as s
      on conflict (address) do update set
        balance = excluded.balance,
        token_account_count = excluded.token_account_count,
        nft_count = excluded.nft_count,
        updated_at = now(),
        snapshot_at = clock_timestamp()`;
    await tx`delete from token_accounts where address = any(${addresses}::text[])`;
    await tx`delete from nfts where address = any(${addresses}::text[])`;
    if (tokens.length > 0) {
      await tx`
        insert into token_accounts (address, mint, symbol, balance, usd_value)
        select * from unnest(
          ${tokens.map((t) => t.address)}::text[], ${tokens.map((t) => t.mint)}::text[],
          ${tokens.map((t) => t.symbol)}::text[], ${tokens.map((t) => String(t.balance))}::text[]::numeric[],
          ${tokens.map((t) => String(t.usdValue))}::text[]::numeric[])`;
    }
    if (nfts.length > 0) {
      await tx`
        insert into nfts (address, mint, name, collection, floor_price)
        select * from unnest(
          ${nfts.map((n) => n.address)}::text[], ${nfts.map((n) => n.mint)}::text[],
          ${nfts.map((n) => n.name)}::text[], ${nfts.map((n) => n.collection)}::text[],
          ${nfts.map((n) => String(n.floorPrice))}::text[]::numeric[])`;
    }
  });
}
