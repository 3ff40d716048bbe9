import { describe, expect, it } from "vitest";
import { entityTagOf, ifMatchOf } from "../../src/http/etag.ts";

const item = { walletId: "wal_1", tags: ["a", "b"], alias: null };
const tag = entityTagOf(item);

describe("entityTagOf", () => {
  it("is a quoted strong tag that depends on the data, not on the order of its keys", () => {
    expect(tag).toMatch(/^"[A-Za-z0-9_-]{22}"$/);
    expect(entityTagOf({ alias: null, tags: ["a", "b"], walletId: "wal_1" })).toBe(tag);
    expect(entityTagOf({ ...item, tags: ["b", "a"] })).not.toBe(tag);
    expect(entityTagOf({ ...item, alias: "" })).not.toBe(tag);
  });
});

describe("ifMatchOf", () => {
  it("is undefined without the header, so the write is not guarded", () => {
    expect(ifMatchOf(undefined)).toBeUndefined();
  });

  it("holds for * whatever the item is", () => {
    expect(ifMatchOf("*")!({ anything: 1 })).toBe(true);
    expect(ifMatchOf(" * ")!(item)).toBe(true);
  });

  it.each([tag, `"other", ${tag}`, `${tag},"other"`, ` , ${tag} ,, `])("holds when %s lists the current tag", (header) => {
    expect(ifMatchOf(header)!(item)).toBe(true);
  });

  it("does not hold for a stale tag, nor for the current one marked weak (If-Match compares strongly)", () => {
    expect(ifMatchOf('"stale"')!(item)).toBe(false);
    expect(ifMatchOf(`W/${tag}`)!(item)).toBe(false);
  });

  it.each(["", " ", "nope", tag.slice(1, -1), `${tag} x`, `${tag} "other"`, `*, ${tag}`, '"a b"', '"a'])("refuses %j with 400 at headers.if-match", (header) => {
    expect(() => ifMatchOf(header)).toThrow(expect.objectContaining({ status: 400, errors: [expect.objectContaining({ path: "headers.if-match" })] }));
  });
});
