import { describe, expect, it } from "vitest";
import { createTtlCache } from "../../src/ttl-cache.ts";
import { createReadCache } from "../../src/http/read-cache.ts";

describe("ttl cache", () => {
  it("returns an entry until its expiry and drops it at the expiry", () => {
    let now = 1_000;
    const cache = createTtlCache<string, number>(10, () => now);
    cache.set("a", 1, 1_500);
    now = 1_499;
    expect(cache.get("a")).toBe(1);
    now = 1_500;
    expect(cache.get("a")).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it("evicts the oldest entry when full", () => {
    const cache = createTtlCache<string, number>(2, () => 0);
    cache.set("a", 1, 10);
    cache.set("b", 2, 10);
    cache.set("c", 3, 10);
    expect([cache.get("a"), cache.get("b"), cache.get("c")]).toEqual([undefined, 2, 3]);
  });

  it("keeps a re-set key as the newest", () => {
    const cache = createTtlCache<string, number>(2, () => 0);
    cache.set("a", 1, 10);
    cache.set("b", 2, 10);
    cache.set("a", 9, 10);
    cache.set("c", 3, 10);
    expect([cache.get("a"), cache.get("b"), cache.get("c")]).toEqual([9, undefined, 3]);
  });
});

describe("read cache", () => {
  it("never serves from memory when its ttl is 0", () => {
    const cache = createReadCache(0);
    expect(cache.set("k", { v: 1 })).toEqual({ v: 1 });
    expect(cache.get("k")).toBeUndefined();
  });

  it("serves a stored page within its ttl, not after, and not after clear()", () => {
    let now = 0;
    const cache = createReadCache(1_000, () => now);
    cache.set("k", "page");
    now = 999;
    expect(cache.get("k")).toBe("page");
    now = 1_000;
    expect(cache.get("k")).toBeUndefined();
    cache.set("k", "page");
    cache.clear();
    expect(cache.get("k")).toBeUndefined();
  });
});
