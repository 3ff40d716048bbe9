// The block times ingest takes. A block time moves what the activity counters call "now" for
// its address: the trailing hour of unusual_activity and high_velocity is measured back from the
// newest one, and dormant_reactivation's silence from the previous send. So one item dated days
// ahead (a feed's clock, a mapping bug, or anyone's transfer to the wallet through a careless
// feed) would leave every real transaction of the wallet outside its hour and switch those off,
// and one dated 0 (a feed's "unknown") would make the next real send look like keys waking up
// after fifty years. Neither can be a Solana block: they are refused with their path.

/** 2020-03-16T00:00:00Z, the day of Solana mainnet-beta's first block: no block time is earlier. */
export const SOLANA_GENESIS_SECONDS = 1_584_316_800;

/**
 * How far a block time may run ahead of this server's clock: a validator's clock or ours off
 * by a few seconds is normal; minutes ahead is a wrong timestamp.
 */
export const MAX_BLOCK_TIME_AHEAD_SECONDS = 600;

/** Why a block time (Unix seconds) cannot be a block's yet, or null when it can. */
export function blockTimeAheadIssue(blockTime: number, now: Date): string | null {
  const nowSeconds = Math.floor(now.getTime() / 1000);
  if (blockTime <= nowSeconds + MAX_BLOCK_TIME_AHEAD_SECONDS) return null;
  return `is ${describeAhead(blockTime - nowSeconds)} ahead of this server's clock (${new Date(nowSeconds * 1000).toISOString()}); at most ${MAX_BLOCK_TIME_AHEAD_SECONDS / 60} minutes ahead is taken`;
}

function describeAhead(seconds: number): string {
  if (seconds < 3600) return `${seconds} seconds`;
  const hours = Math.floor(seconds / 3600);
  if (seconds < 2 * 86_400) return hours === 1 ? "1 hour" : `${hours} hours`;
  return `${Math.floor(seconds / 86_400)} days`;
}
