import { describe, expect, it } from "vitest";
import { createHostSlots, receiverOf } from "../../src/notify/host-slots.ts";

const OWNER = "alice";
const quick = { durationMs: 5, answered: true };
const slow = { durationMs: 1_500, answered: true };
const unanswered = { durationMs: 200, answered: false };

describe("createHostSlots", () => {
  it("gives a receiver it knows nothing of the floor, and refuses the next one over it", () => {
    const slots = createHostSlots({ floor: 2, ceiling: 10, slowMs: 1_000 });
    expect([slots.tryTake(OWNER, "a"), slots.tryTake(OWNER, "a"), slots.tryTake(OWNER, "a")]).toEqual([true, true, false]);
    // Another receiver's slots are its own.
    expect(slots.tryTake(OWNER, "b")).toBe(true);
  });

  it("grows a receiver's cap by one per quick answer, up to the ceiling", () => {
    const slots = createHostSlots({ floor: 2, ceiling: 4, slowMs: 1_000 });
    for (let i = 0; i < 5; i++) {
      expect(slots.tryTake(OWNER, "a")).toBe(true);
      slots.give(OWNER, "a", quick);
    }
    expect(slots.capOf(OWNER, "a")).toBe(4);
    expect([1, 2, 3, 4, 5].map(() => slots.tryTake(OWNER, "a"))).toEqual([true, true, true, true, false]);
  });

  it("halves the cap on a slow or unanswered attempt, never below the floor", () => {
    const slots = createHostSlots({ floor: 2, ceiling: 16, slowMs: 1_000 });
    for (let i = 0; i < 14; i++) {
      slots.tryTake(OWNER, "a");
      slots.give(OWNER, "a", quick);
    }
    expect(slots.capOf(OWNER, "a")).toBe(16);
    slots.tryTake(OWNER, "a");
    slots.give(OWNER, "a", slow);
    expect(slots.capOf(OWNER, "a")).toBe(8);
    for (const attempt of [unanswered, unanswered, unanswered, unanswered]) {
      slots.tryTake(OWNER, "a");
      slots.give(OWNER, "a", attempt);
    }
    expect(slots.capOf(OWNER, "a")).toBe(2);
  });

  it("frees a slot when it is given back", () => {
    const slots = createHostSlots({ floor: 1, ceiling: 1, slowMs: 1_000 });
    expect(slots.tryTake(OWNER, "a")).toBe(true);
    expect(slots.tryTake(OWNER, "a")).toBe(false);
    slots.give(OWNER, "a", slow);
    expect(slots.tryTake(OWNER, "a")).toBe(true);
  });
});

describe("createHostSlots, per owner", () => {
  it("gives each owner a share of a receiver of its own: another owner's hanging attempts there neither fill nor shrink it", () => {
    const slots = createHostSlots({ floor: 2, ceiling: 10, slowMs: 1_000 });
    for (let i = 0; i < 3; i++) {
      slots.tryTake("alice", "shared.example");
      slots.give("alice", "shared.example", quick);
    }
    expect([slots.tryTake("mallory", "shared.example"), slots.tryTake("mallory", "shared.example"), slots.tryTake("mallory", "shared.example")]).toEqual([true, true, false]);
    slots.give("mallory", "shared.example", unanswered);
    expect(slots.capOf("mallory", "shared.example")).toBe(2);
    expect(slots.capOf("alice", "shared.example")).toBe(5);
    expect([1, 2, 3, 4, 5].map(() => slots.tryTake("alice", "shared.example"))).toEqual([true, true, true, true, true]);
  });

  it("keeps each owner's line at a receiver apart: another owner's backlog there does not lengthen this one's wait", () => {
    const clock = { now: 0 };
    const slots = createHostSlots({ floor: 2, ceiling: 10, slowMs: 1_000, stepAsideMs: 1_000, now: () => clock.now, random: () => 0.5 });
    // Mallory's share hangs (15 s without an answer), with a long line behind it.
    slots.tryTake("mallory", "shared.example");
    slots.tryTake("mallory", "shared.example");
    clock.now += 15_000;
    for (let i = 0; i < 100; i++) expect(slots.stepAside("mallory", "shared.example")).toBeGreaterThanOrEqual(15_000);
    // Alice's share answers quickly: a job over its cap waits about a second.
    slots.tryTake("alice", "shared.example");
    slots.give("alice", "shared.example", quick);
    for (let i = 0; i < 3; i++) expect(slots.tryTake("alice", "shared.example")).toBe(true);
    expect(slots.tryTake("alice", "shared.example")).toBe(false);
    expect(slots.stepAside("alice", "shared.example")).toBe(1_000);
  });

  it("holds one owner's receivers not known to answer quickly to slowSlotsPerOwner slots together; other owners are not held by it", () => {
    const slots = createHostSlots({ floor: 2, ceiling: 10, slowMs: 1_000, slowSlotsPerOwner: 4 });
    expect(["a", "a", "b", "b"].map((host) => slots.tryTake("trudy", host))).toEqual([true, true, true, true]);
    // A third new receiver is within its own floor, but the owner's bound is reached.
    expect(slots.tryTake("trudy", "c")).toBe(false);
    expect(slots.tryTake("bob", "c")).toBe(true);
    // A slot given back frees the bound.
    slots.give("trudy", "a", unanswered);
    expect(slots.tryTake("trudy", "c")).toBe(true);
    expect(slots.tryTake("trudy", "d")).toBe(false);
  });

  it("does not hold a receiver known to answer quickly by the owner's bound, and turns a new one away while the bound is full", () => {
    const slots = createHostSlots({ floor: 2, ceiling: 10, slowMs: 1_000, slowSlotsPerOwner: 4 });
    slots.tryTake("fund", "quick.example");
    slots.give("fund", "quick.example", quick);
    expect(["a", "a", "b", "b"].map((host) => slots.tryTake("fund", host))).toEqual([true, true, true, true]);
    expect([1, 2, 3].map(() => slots.tryTake("fund", "quick.example"))).toEqual([true, true, true]);
    expect(slots.tryTake("fund", "new.example")).toBe(false);
  });

  it("counts a receiver known to be quick toward the bound once its attempts in flight have been silent for slowMs", () => {
    const setUp = () => {
      const clock = { now: 0 };
      const slots = createHostSlots({ floor: 2, ceiling: 10, slowMs: 1_000, slowSlotsPerOwner: 4, now: () => clock.now });
      slots.tryTake("fund", "quiet.example");
      slots.give("fund", "quiet.example", quick);
      for (let i = 0; i < 3; i++) slots.tryTake("fund", "quiet.example");
      slots.tryTake("fund", "new.example");
      return { slots, clock };
    };
    const answering = setUp();
    answering.clock.now += 999;
    expect(answering.slots.tryTake("fund", "other.example")).toBe(true);
    const silent = setUp();
    silent.clock.now += 1_000;
    expect(silent.slots.tryTake("fund", "other.example")).toBe(false);
  });

  it("sends a job turned away by the owner's bound to the owner's line: at least the timeout while its receivers hang, one attempt over the bound's slots longer per job", () => {
    const clock = { now: 0 };
    const slots = createHostSlots({ floor: 2, ceiling: 10, slowMs: 1_000, slowSlotsPerOwner: 4, now: () => clock.now, random: () => 0.5 });
    // Two receivers hold the owner's four slots, 15 s without an answer.
    expect(["a", "a", "b", "b"].map((host) => slots.tryTake("trudy", host))).toEqual([true, true, true, true]);
    clock.now += 15_000;
    expect(slots.tryTake("trudy", "e")).toBe(false);
    const waits = Array.from({ length: 8 }, () => slots.stepAside("trudy", "e"));
    for (const wait of waits) expect(wait).toBeGreaterThanOrEqual(15_000);
    expect(waits[7]! - waits[3]!).toBe(4 * (15_000 / 4));
    // The receiver's own line is untouched: it had no job waiting.
    expect(slots.capOf("trudy", "e")).toBe(2);
  });
});

describe("createHostSlots after a quiet spell", () => {
  /** As deliver.ts sets them: 200 slots, a floor of 20, 5 s counts as slow, 40 slots for an owner's slow receivers. */
  const afterQuiet = (quietMs: number, quickAnswers: number) => {
    const clock = { now: 1_000_000 };
    const slots = createHostSlots({
      floor: 20,
      ceiling: 200,
      slowMs: 5_000,
      slowSlotsPerOwner: 40,
      stepAsideMs: 1_000,
      maxStepAsideMs: 5 * 60_000,
      now: () => clock.now,
      random: () => 0.999, // the longest least wait: 1.5 s
    });
    // A receiver that answered in 300 ms, one attempt at a time: its cap grew past the floor, so it is remembered.
    for (let i = 0; i < quickAnswers; i++) {
      expect(slots.tryTake(OWNER, "quick.example")).toBe(true);
      clock.now += 300;
      slots.give(OWNER, "quick.example", { durationMs: 300, answered: true });
    }
    // Then nothing to send, and then a burst all at once (as jobs held by a PostgreSQL stall are released).
    clock.now += quietMs;
    return { slots, clock };
  };
  /** A burst of `count` jobs to the receiver at one moment: how many got a slot, and how long each of the others steps aside. */
  const burst = (slots: ReturnType<typeof createHostSlots>, count: number) => {
    let taken = 0;
    const waits: number[] = [];
    for (let i = 0; i < count; i++) {
      if (slots.tryTake(OWNER, "quick.example")) taken++;
      else waits.push(slots.stepAside(OWNER, "quick.example"));
    }
    return { taken, waits };
  };

  for (const [label, quietMs] of [["a minute", 60_000], ["an hour", 3_600_000]] as const) {
    it(`does not take ${label} with nothing to send for silence: a burst filling every slot of a receiver that answers quickly steps aside for a second or so`, () => {
      const { slots } = afterQuiet(quietMs, 1);
      const { taken, waits } = burst(slots, 100);
      expect(taken).toBe(21);
      expect(waits).toHaveLength(79);
      // Counted as silence, the quiet spell sent them away for minutes (up to the 5-minute bound).
      expect(Math.max(...waits)).toBeLessThanOrEqual(1_500);
    });

    it(`does not hold a receiver that answers quickly to the owner's bound on slow receivers after ${label} with nothing to send`, () => {
      const { slots } = afterQuiet(quietMs, 60);
      expect(slots.capOf(OWNER, "quick.example")).toBe(80);
      const { taken, waits } = burst(slots, 100);
      // Counted as silence, the quiet spell made it "not known to answer quickly": 40 taken, and
      // the other 60 sent to the owner's line for as long as the quiet spell, up to 5 minutes.
      expect(taken).toBe(80);
      expect(Math.max(...waits)).toBeLessThanOrEqual(1_500);
    });
  }

  it("still counts silence from when the burst's attempts began: every slot busy and nothing back for 10 s", () => {
    const { slots, clock } = afterQuiet(3_600_000, 60);
    burst(slots, 80);
    clock.now += 10_000;
    expect(slots.stepAside(OWNER, "quick.example")).toBeGreaterThanOrEqual(10_000);
    // Silent past slowMs, its 80 attempts in flight fill the owner's bound: a new receiver waits.
    expect(slots.tryTake(OWNER, "new.example")).toBe(false);
  });
});

describe("receiverOf", () => {
  it("names a receiver by its registrable domain, whatever the subdomain, port, case or trailing dot", () => {
    expect(receiverOf("https://Hooks.Example.com/a?b=1")).toBe("example.com");
    const tarpit = ["https://a.tarpit.example/h", "https://b.tarpit.example:8443/h", "https://C.TARPIT.EXAMPLE/h", "https://d.tarpit.example./h", "https://tarpit.example/h", "https://x_1.deep.tarpit.example/h"];
    expect(new Set(tarpit.map(receiverOf))).toEqual(new Set(["tarpit.example"]));
  });

  it("tells apart the domains under a public suffix", () => {
    expect(receiverOf("https://hooks.acme.co.uk/h")).toBe("acme.co.uk");
    expect(receiverOf("https://hooks.other.co.uk/h")).toBe("other.co.uk");
  });

  it("tells apart the tenants of a hosting platform (the Public Suffix List's private section): one tenant's hanging endpoint must not cap the others'", () => {
    const tenants = [
      "https://abc123.execute-api.us-east-1.amazonaws.com/prod/hook",
      "https://def456.execute-api.us-east-1.amazonaws.com/prod/hook",
      "https://xyz.lambda-url.us-east-1.on.aws/",
      "https://fund-a.azurewebsites.net/hook",
      "https://fund-b.azurewebsites.net/hook",
      "https://desk.herokuapp.com/hook",
    ];
    expect(new Set(tenants.map(receiverOf)).size).toBe(tenants.length);
    expect(receiverOf("https://v2.abc123.execute-api.us-east-1.amazonaws.com/h")).toBe("abc123.execute-api.us-east-1.amazonaws.com");
  });

  it("keys an IPv4 literal on itself and an IPv6 literal on its /64, with its IPv4-mapped form on the IPv4 address", () => {
    expect(receiverOf("http://127.0.0.1:8080/hook")).toBe("127.0.0.1");
    expect(receiverOf("http://0x7f.1/hook")).toBe("127.0.0.1");
    expect(receiverOf("http://[::ffff:127.0.0.1]/hook")).toBe("127.0.0.1");
    expect(receiverOf("https://[2001:db8:1:2::1]/h")).toBe("2001:db8:1:2::/64");
    expect(receiverOf("https://[2001:DB8:1:2:ffff::9]:8443/h")).toBe("2001:db8:1:2::/64");
    expect(receiverOf("https://[2001:db8:1:3::1]/h")).toBe("2001:db8:1:3::/64");
  });

  it("keys a name that has no registrable domain on the name itself", () => {
    expect(receiverOf("http://localhost:3000/h")).toBe("localhost");
  });

  it("is undefined for what is no URL", () => {
    expect(receiverOf("not a url")).toBeUndefined();
  });
});
