// A small bounded cache whose entries carry their own expiry. Map keeps insertion order,
// so when full the oldest entry goes first; an entry read after its expiry is dropped, and
// each set drops the expired entries at the front (with one TTL for all, every expired one).
export type TtlCache<K, V> = {
  get: (key: K) => V | undefined;
  set: (key: K, value: V, expiresAt: number) => void;
  delete: (key: K) => void;
  clear: () => void;
  readonly size: number;
};

export function createTtlCache<K, V>(maxEntries: number, now: () => number = Date.now): TtlCache<K, V> {
  const entries = new Map<K, { value: V; expiresAt: number }>();
  return {
    get: (key) => {
      const entry = entries.get(key);
      if (!entry) return undefined;
      if (entry.expiresAt <= now()) {
        entries.delete(key);
        return undefined;
      }
      return entry.value;
    },
    set: (key, value, expiresAt) => {
      entries.delete(key);
      // Expired entries at the front go now, not when read again: a cache of pages nobody asks
      // for twice otherwise kept them all, up to maxEntries, for as long as the process lived.
      const at = now();
      for (const [oldest, entry] of entries) {
        if (entry.expiresAt > at) break;
        entries.delete(oldest);
      }
      if (entries.size >= maxEntries) entries.delete(entries.keys().next().value as K);
      entries.set(key, { value, expiresAt });
    },
    delete: (key) => void entries.delete(key),
    clear: () => entries.clear(),
    get size() {
      return entries.size;
    },
  };
}
