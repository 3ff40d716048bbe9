import { describe, expect, it } from "vitest";
import {
  BURST_WINDOW_MS,
  IN_ORDER_PER_OWNER,
  LOWEST_PRIORITY,
  burstOf,
  burstPriorities,
  countBursts,
  priorityForRank,
} from "../../src/queue/delivery-priority.ts";

const minute = 30 * BURST_WINDOW_MS;
const many = (burst: string | undefined, count: number) => Array.from({ length: count }, () => burst);

describe("priorityForRank", () => {
  it("gives an owner's first notifications no priority and the later ones 1, 2, 3 … in turn", () => {
    expect(priorityForRank(1)).toBe(0);
    expect(priorityForRank(IN_ORDER_PER_OWNER)).toBe(0);
    expect(priorityForRank(IN_ORDER_PER_OWNER + 1)).toBe(1);
    expect(priorityForRank(IN_ORDER_PER_OWNER + 2)).toBe(2);
  });

  it("never goes past BullMQ's lowest priority, which BullMQ would refuse", () => {
    expect(LOWEST_PRIORITY).toBe(2_097_151);
    expect(priorityForRank(LOWEST_PRIORITY + IN_ORDER_PER_OWNER)).toBe(LOWEST_PRIORITY);
    expect(priorityForRank(10 * LOWEST_PRIORITY)).toBe(LOWEST_PRIORITY);
  });
});

describe("burstOf", () => {
  it("counts an owner's notifications of one minute together, and another minute's or another owner's apart", () => {
    expect(burstOf("alice", minute)).toBe(burstOf("alice", minute + BURST_WINDOW_MS - 1));
    expect(burstOf("alice", minute)).not.toBe(burstOf("alice", minute + BURST_WINDOW_MS));
    expect(burstOf("alice", minute)).not.toBe(burstOf("bob", minute));
  });

  it("keeps owners apart whatever characters their subjects hold", () => {
    expect(burstOf("a:1", minute)).not.toBe(burstOf("a", minute + 1));
    expect(burstOf("1:a", minute)).not.toBe(burstOf("a", minute));
  });

  it("puts a notification without an owner in no burst", () => {
    expect(burstOf(undefined, minute)).toBeUndefined();
  });
});

describe("countBursts", () => {
  it("counts each burst's notifications and leaves out those in none", () => {
    expect(countBursts(["a", "b", undefined, "a"])).toEqual(new Map([["a", 2], ["b", 1]]));
  });
});

describe("burstPriorities", () => {
  it("changes nothing for owners within their first notifications: no job gets a priority", () => {
    const bursts = [...many("a", IN_ORDER_PER_OWNER), ...many("b", IN_ORDER_PER_OWNER), undefined];
    expect(burstPriorities(bursts, new Map()).every((priority) => priority === 0)).toBe(true);
  });

  it("ranks a storm past its first notifications, so that another owner's first one goes before the rest of it", () => {
    const priorities = burstPriorities([...many("storm", 300), "quiet"], new Map());
    expect(priorities.slice(0, IN_ORDER_PER_OWNER).every((priority) => priority === 0)).toBe(true);
    expect(priorities.slice(IN_ORDER_PER_OWNER, 300)).toEqual(Array.from({ length: 300 - IN_ORDER_PER_OWNER }, (_, i) => i + 1));
    // No priority: BullMQ takes it before every job that has one.
    expect(priorities[300]).toBe(0);
  });

  it("gives two storms the same ranks, so that they go side by side, in whatever order their notifications came", () => {
    const interleaved = Array.from({ length: 60 }, (_, i) => (i % 3 === 0 ? "b" : "a"));
    const priorities = burstPriorities(interleaved, new Map());
    const of = (owner: string) => priorities.filter((_, i) => interleaved[i] === owner && priorities[i]! > 0);
    expect(of("a")).toEqual(Array.from({ length: 40 - IN_ORDER_PER_OWNER }, (_, i) => i + 1));
    // b has 20 of the 60: all within its first ones.
    expect(of("b")).toEqual([]);
  });

  it("goes on from the notifications of the burst enqueued before", () => {
    const earlier = new Map([["a", IN_ORDER_PER_OWNER - 1]]);
    expect(burstPriorities(["a", "a", "a", "b"], earlier)).toEqual([0, 1, 2, 0]);
    expect(burstPriorities(["a"], new Map([["a", 1_000]]))).toEqual([1_001 - IN_ORDER_PER_OWNER]);
  });

  it("gives a notification without an owner no priority, however many came before", () => {
    expect(burstPriorities(many(undefined, 500), new Map()).every((priority) => priority === 0)).toBe(true);
  });
});
