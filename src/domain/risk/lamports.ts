// SOL amounts to the lamport (1 SOL = 1e9 lamports), for the sums and cut-offs of large_outflow.
// Every amount the service keeps is whole lamports (at most 9 decimals), but as a double it is
// only the nearest one to that decimal, and plain double sums drift: nine sends of 10.1 SOL and
// one of 9.1 add up to 99.99999999999999, and the 100 SOL cut-off was missed. So sums and
// comparisons go through whole lamports, where they are exact. Pure.
//
// Why Math.round(sol × 1e9) is exact: below 2^22 SOL (about 4.2 million) a double is within
// 2^-32 SOL (0.23 lamport) of the decimal it stands for, and the product adds at most 0.25 (its
// own rounding below 2^52): under half a lamport in all, so rounding finds the lamport. The sum
// of two such amounts is then a whole number below 2^53, exact, and dividing it by 1e9 gives the
// double nearest to the exact decimal, which the next sum reads back exactly again. Past 4.2
// million SOL per sum a lamport may be off: no wallet's day of sends is judged near there.
// activity.lua's addSol makes the same sums in Redis.

export const LAMPORTS_PER_SOL = 1_000_000_000;

/** The whole lamports of a SOL amount: 10.1 → 10_100_000_000 (exact below 2^22 SOL). */
export function lamportsOf(sol: number): number {
  return Math.round(sol * LAMPORTS_PER_SOL);
}

/**
 * a + b to the lamport, as the double nearest to the exact sum: 99.99999999999999 + 0 is 100,
 * and 10.1 added ten times is 101, where plain doubles give 100.99999999999999.
 */
export function addSol(a: number, b: number): number {
  return (lamportsOf(a) + lamportsOf(b)) / LAMPORTS_PER_SOL;
}
