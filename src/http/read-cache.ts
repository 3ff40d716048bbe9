// A short-lived, per-process cache of read responses (GET /v1/wallets pages). The database
// stays the truth: an entry lives ttlMs at most, and any write through this process clears
// the cache at once, so only changes made elsewhere (another API process, the worker's risk
// scoring) can show up to ttlMs late.
import { createTtlCache } from "../ttl-cache.ts";

export type ReadCache = {
  /**
   * The value cached for key, or else the loader's, which is stored unless the cache was
   * cleared while the loader ran. There is no bare set: a reader whose query began before a
   * write committed would otherwise store the old page after the write's clear(), and the
   * writer's next read would get it back for up to ttlMs.
   */
  load: <T>(key: string, loader: () => Promise<T>) => Promise<T>;
  clear: () => void;
};

/**
 * A page of 100 wallets is about 23 KB: 1,000 pages are about 23 MB at most (10,000 held about
 * 230 MB, kept until the next write through the process).
 */
const MAX_ENTRIES = 1_000;

export function createReadCache(ttlMs: number, now: () => number = Date.now): ReadCache {
  const entries = createTtlCache<string, unknown>(MAX_ENTRIES, now);
  // Counts clear() calls: a loader's value is only as new as the generation it started in.
  let generation = 0;
  return {
    load: async <T>(key: string, loader: () => Promise<T>) => {
      if (ttlMs <= 0) return loader();
      const cached = entries.get(key) as T | undefined;
      if (cached !== undefined) return cached;
      const startedIn = generation;
      const value = await loader();
      if (generation === startedIn) entries.set(key, value, now() + ttlMs);
      return value;
    },
    clear: () => {
      generation += 1;
      entries.clear();
    },
  };
}
