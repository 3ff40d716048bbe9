import { describe, expect, it } from "vitest";
import { idTime, isId, newId } from "../../src/ids.ts";

describe("newId", () => {
  it("makes prefixed ids of 26 Crockford base32 characters", () => {
    const id = newId("evt");
    expect(isId("evt", id)).toBe(true);
    expect(isId("ntf", id)).toBe(false);
  });

  it("sorts ids of one millisecond in the order they were made", () => {
    const at = Date.UTC(2026, 10, 21, 8, 0, 0);
    const ids = Array.from({ length: 1_000 }, (_, i) => newId(i % 2 === 0 ? "evt" : "ntf", at).slice(4));
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("sorts by time first: a later millisecond sorts after, an earlier one before", () => {
    const at = Date.UTC(2026, 10, 21, 8, 0, 0);
    const middle = newId("evt", at);
    expect(newId("evt", at + 1) > middle).toBe(true);
    expect(newId("evt", at - 1) < middle).toBe(true);
  });
});

describe("idTime", () => {
  it("reads back the time an id was made", () => {
    for (const at of [0, 1, 1_732_000_000_123, 2 ** 48 - 1]) expect(idTime(newId("bat", at))).toBe(at);
  });
});
