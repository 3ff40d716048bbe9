import { describe, expect, it } from "vitest";
import { WINDOW_MS, createWindowCounter } from "../../src/http/rate-limit/window-counter.ts";

const start = 100 * WINDOW_MS; // the start of a window

describe("window counter", () => {
  it("allows up to the limit in a window and refuses the next, with the seconds to the window's end", () => {
    const counter = createWindowCounter(3);
    const decisions = [0, 1, 2, 3].map(() => counter.take("alice", start + 15_000));
    expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, false]);
    expect(decisions.map((d) => d.remaining)).toEqual([2, 1, 0, 0]);
    expect(decisions[3]!.resetSeconds).toBe(45);
  });

  it("starts afresh in the next window and counts callers apart", () => {
    const counter = createWindowCounter(1);
    expect(counter.take("alice", start).allowed).toBe(true);
    expect(counter.take("alice", start + 1).allowed).toBe(false);
    expect(counter.take("bob", start + 1).allowed).toBe(true);
    expect(counter.take("alice", start + WINDOW_MS).allowed).toBe(true);
  });

  it("hands each count to the shared counter once and learns the other processes' counts", () => {
    const counter = createWindowCounter(10);
    counter.take("alice", start);
    counter.take("alice", start);
    expect(counter.drain(start)).toEqual([{ caller: "alice", window: 100, count: 2 }]);
    expect(counter.drain(start)).toEqual([]);
    counter.learn("alice", 100, 9); // 7 more came through other processes
    expect(counter.take("alice", start).remaining).toBe(0);
    expect(counter.take("alice", start).allowed).toBe(false);
  });

  it("gives counts back after a failed sync so that the next sync sends them", () => {
    const counter = createWindowCounter(10);
    counter.take("alice", start);
    const pending = counter.drain(start);
    counter.restore(pending);
    expect(counter.drain(start)).toEqual([{ caller: "alice", window: 100, count: 1 }]);
  });

  it("never lowers what it knows from a late reply", () => {
    const counter = createWindowCounter(5);
    for (let i = 0; i < 4; i++) counter.take("alice", start);
    counter.drain(start);
    counter.learn("alice", 100, 2);
    expect(counter.take("alice", start).remaining).toBe(0);
  });
});
