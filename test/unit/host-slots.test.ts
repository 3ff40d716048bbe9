import { describe, expect, it } from "vitest";
import { createHostSlots, receiverOf } from "../../src/notify/host-slots.ts";

const quick = { durationMs: 5, answered: true };
const slow = { durationMs: 1_500, answered: true };
const unanswered = { durationMs: 200, answered: false };

describe("createHostSlots", () => {
  it("gives a receiver it knows nothing of the floor, and refuses the next one over it", () => {
    const slots = createHostSlots({ floor: 2, ceiling: 10, slowMs: 1_000 });
    expect([slots.tryTake("a"), slots.tryTake("a"), slots.tryTake("a")]).toEqual([true, true, false]);
    // Another receiver's slots are its own.
    expect(slots.tryTake("b")).toBe(true);
  });

  it("grows a receiver's cap by one per quick answer, up to the ceiling", () => {
    const slots = createHostSlots({ floor: 2, ceiling: 4, slowMs: 1_000 });
    for (let i = 0; i < 5; i++) {
      expect(slots.tryTake("a")).toBe(true);
      slots.give("a", quick);
    }
    expect(slots.capOf("a")).toBe(4);
    expect([1, 2, 3, 4, 5].map(() => slots.tryTake("a"))).toEqual([true, true, true, true, false]);
  });

  it("halves the cap on a slow or unanswered attempt, never below the floor", () => {
    const slots = createHostSlots({ floor: 2, ceiling: 16, slowMs: 1_000 });
    for (let i = 0; i < 14; i++) {
      slots.tryTake("a");
      slots.give("a", quick);
    }
    expect(slots.capOf("a")).toBe(16);
    slots.tryTake("a");
    slots.give("a", slow);
    expect(slots.capOf("a")).toBe(8);
    for (const attempt of [unanswered, unanswered, unanswered, unanswered]) {
      slots.tryTake("a");
      slots.give("a", attempt);
    }
    expect(slots.capOf("a")).toBe(2);
  });

  it("frees a slot when it is given back", () => {
    const slots = createHostSlots({ floor: 1, ceiling: 1, slowMs: 1_000 });
    expect(slots.tryTake("a")).toBe(true);
    expect(slots.tryTake("a")).toBe(false);
    slots.give("a", slow);
    expect(slots.tryTake("a")).toBe(true);
  });
});

describe("receiverOf", () => {
  it("names a receiver by host and port, in lower case", () => {
    expect(receiverOf("https://Hooks.Example.com/a?b=1")).toBe("hooks.example.com");
    expect(receiverOf("http://127.0.0.1:8080/hook")).toBe("127.0.0.1:8080");
  });

  it("is undefined for what is no URL", () => {
    expect(receiverOf("not a url")).toBeUndefined();
  });
});
