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

  it("drops the expired entries at the front when a new one is set, read again or not", () => {
    let clock = 0;
    const cache = createTtlCache<string, number>(10_000, () => clock);
    for (let i = 0; i < 1_000; i++) cache.set(`page ${i}`, i, clock + 1_000);
    expect(cache.size).toBe(1_000);
    clock = 1_000; // every one of them has expired; none is read again
    cache.set("one more", 0, clock + 1_000);
    expect(cache.size).toBe(1);
    clock = 1_500;
    cache.set("another", 0, clock + 1_000);
    expect(cache.size).toBe(2);
  });
});

describe("read cache", () => {
  /** A loader that counts its calls and answers the given values in turn. */
  const loaderOf = (...values: string[]) => {
    const loader = Object.assign(async () => values[loader.calls++] ?? "unexpected call", { calls: 0 });
    return loader;
  };

  /** A loader that answers only when the test says so: a query still running. */
  const pendingLoader = (value: string) => {
    let answer = () => {};
    const answered = new Promise<void>((resolve) => (answer = resolve));
    return { load: async () => (await answered, value), answer };
  };

  it("never serves from memory when its ttl is 0", async () => {
    const cache = createReadCache(0);
    const loader = loaderOf("first", "second");
    expect(await cache.load("k", loader)).toBe("first");
    expect(await cache.load("k", loader)).toBe("second");
  });

  it("serves a stored page within its ttl, not after, and not after clear()", async () => {
    let now = 0;
    const cache = createReadCache(1_000, () => now);
    const loader = loaderOf("page", "page after expiry", "page after clear");
    expect(await cache.load("k", loader)).toBe("page");
    now = 999;
    expect(await cache.load("k", loader)).toBe("page");
    now = 1_000;
    expect(await cache.load("k", loader)).toBe("page after expiry");
    cache.clear();
    expect(await cache.load("k", loader)).toBe("page after clear");
    expect(loader.calls).toBe(3);
  });

  it("does not keep a page whose loader was still running when clear() was called", async () => {
    const cache = createReadCache(60_000, () => 0);
    const before = pendingLoader("page read before the write");
    const reading = cache.load("k", before.load);
    cache.clear(); // the write committed and cleared the cache while the query ran
    before.answer();
    expect(await reading).toBe("page read before the write");
    expect(await cache.load("k", loaderOf("page after the write"))).toBe("page after the write");
  });

  it("lets a slow reader from before clear() never replace the page a later reader stored", async () => {
    const cache = createReadCache(60_000, () => 0);
    const slow = pendingLoader("old page");
    const slowReading = cache.load("k", slow.load);
    cache.clear();
    expect(await cache.load("k", loaderOf("new page"))).toBe("new page");
    slow.answer();
    await slowReading;
    expect(await cache.load("k", loaderOf("unexpected reload"))).toBe("new page");
  });
});
