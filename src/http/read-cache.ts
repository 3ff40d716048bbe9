// A short-lived, per-process cache of read responses (GET /v1/wallets pages). The database
// stays the truth: an entry lives ttlMs at most, and any write through this process clears
// the cache at once, so only changes made elsewhere (another API process, the worker's risk
// scoring) can show up to ttlMs late.
import { createTtlCache } from "../ttl-cache.ts";

export type ReadCache = {
  get: <T>(key: string) => T | undefined;
  /** Stores and returns the value (a no-op store when the cache is off). */
  set: <T>(key: string, value: T) => T;
  clear: () => void;
};

const MAX_ENTRIES = 10_000;

export function createReadCache(ttlMs: number, now: () => number = Date.now): ReadCache {
  const entries = createTtlCache<string, unknown>(MAX_ENTRIES, now);
  return {
    get: <T>(key: string) => (ttlMs > 0 ? (entries.get(key) as T | undefined) : undefined),
    set: (key, value) => {
      if (ttlMs > 0) entries.set(key, value, now() + ttlMs);
      return value;
    },
    clear: () => entries.clear(),
  };
}
