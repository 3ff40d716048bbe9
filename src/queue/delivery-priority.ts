// Fairness between callers on a delivery queue. Each channel's queue is shared by every caller
// and served in order, so one caller's burst (a market event firing 5,000 of its alerts, a
// threshold set too low) once held every other caller's notification behind it: minutes on
// email or SMS, which take a few dozen a second. A caller's notifications are counted per
// channel and minute; the first IN_ORDER_PER_OWNER of a minute keep their place in line (no
// BullMQ priority: the usual case costs nothing and changes nothing), and the n-th after them
// gets priority n. BullMQ takes every job without a priority before any job with one, and
// those with one lowest number first (in the order added among equals), so another caller's
// first notifications overtake a burst, and the bursts of several callers go side by side: each
// caller's 21st, then each caller's 22nd, and so on.

/** A caller's notifications per channel and minute that go in arrival order, without a priority. */
export const IN_ORDER_PER_OWNER = 20;

/** The length of the count: a burst is a caller's notifications on a channel made in one minute. */
export const BURST_WINDOW_MS = 60_000;

/** BullMQ's lowest priority (the largest number it accepts, 2^21 - 1: PRIORITY_LIMIT in its job.js). */
export const LOWEST_PRIORITY = 2 ** 21 - 1;

/**
 * The burst a notification counts in on its channel's queue: its owner's, in the minute it was
 * made (its id's time, so a re-enqueue by the reconciler counts in the same minute as the first
 * enqueue did). None without an owner: such a notification keeps its place in line.
 */
export function burstOf(owner: string | undefined, createdAtMs: number): string | undefined {
  if (owner === undefined) return undefined;
  // The owner last: a `sub` may hold any character, a colon included.
  return `${Math.floor(createdAtMs / BURST_WINDOW_MS)}:${owner}`;
}

/** The priority of a burst's rank-th notification (from 1): none (0) for the first IN_ORDER_PER_OWNER, then 1, 2, … */
export function priorityForRank(rank: number): number {
  return rank <= IN_ORDER_PER_OWNER ? 0 : Math.min(rank - IN_ORDER_PER_OWNER, LOWEST_PRIORITY);
}

/** How many of an enqueue's notifications fall in each burst. */
export function countBursts(bursts: ReadonlyArray<string | undefined>): Map<string, number> {
  const counts = new Map<string, number>();
  for (const burst of bursts) if (burst !== undefined) counts.set(burst, (counts.get(burst) ?? 0) + 1);
  return counts;
}

/**
 * Each notification's priority, given how many of each burst were enqueued before this enqueue
 * (`earlier`, none when absent): a burst's notifications are ranked in the order given, after
 * the earlier ones.
 */
export function burstPriorities(bursts: ReadonlyArray<string | undefined>, earlier: ReadonlyMap<string, number>): number[] {
  const ranked = new Map<string, number>();
  return bursts.map((burst) => {
    if (burst === undefined) return 0;
    const rank = (ranked.get(burst) ?? earlier.get(burst) ?? 0) + 1;
    ranked.set(burst, rank);
    return priorityForRank(rank);
  });
}
