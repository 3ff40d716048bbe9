// Jobs that stepped aside from a receiver while it was slow are called back by its next quick
// answer (host-slots.ts give), instead of keeping delays reckoned at the slow pace (up to 5
// minutes) after it has recovered, while newer notifications overtook them.
import { describe, expect, it } from "vitest";
import { createHostSlots } from "../../src/notify/host-slots.ts";

const OWNER = "alice";
const FLOOR = 2;
const SLOW_MS = 5_000;
const STEP_ASIDE_MS = 1_000;
const quick = { durationMs: 20, answered: true };
/** Answered, but past SLOW_MS: the receiver counts as slow. */
const slowAnswer = { durationMs: 8_000, answered: true };
const unanswered = { durationMs: 15_000, answered: false };

function slotsAt() {
  const clock = { now: 1_000_000 };
  const slots = createHostSlots({
    floor: FLOOR,
    ceiling: 200,
    slowMs: SLOW_MS,
    stepAsideMs: STEP_ASIDE_MS,
    maxStepAsideMs: 5 * 60_000,
    slowSlotsPerOwner: 2 * FLOOR,
    now: () => clock.now,
    random: () => 0.5,
  });
  return { slots, clock };
}

/** Takes every slot of the owner's share of `host` (its cap is the floor here). */
function fill(slots: ReturnType<typeof slotsAt>["slots"], host: string): void {
  while (slots.tryTake(OWNER, host));
}

/** A receiver that has just answered slowly, with its slots taken again. */
function slowReceiver() {
  const { slots, clock } = slotsAt();
  fill(slots, "slow.example");
  clock.now += slowAnswer.durationMs;
  expect(slots.give(OWNER, "slow.example", slowAnswer)).toEqual([]);
  fill(slots, "slow.example");
  return { slots, clock };
}

describe("calling back the jobs that stepped aside from a slow receiver", () => {
  it("calls them back at its first quick answer, the one due first first", () => {
    const { slots, clock } = slowReceiver();
    const waits = ["job-1", "job-2", "job-3"].map((id) => slots.stepAside(OWNER, "slow.example", id));
    // Reckoned at the slow pace: each one an attempt over the floor's slots behind the one before.
    expect(waits[0]).toBeGreaterThanOrEqual(slowAnswer.durationMs);
    expect(waits[2]! - waits[0]!).toBe(2 * (slowAnswer.durationMs / FLOOR));
    clock.now += 1_000;
    expect(slots.give(OWNER, "slow.example", quick)).toEqual(["job-1", "job-2", "job-3"]);
  });

  it("calls each one back once: a later quick answer calls back none", () => {
    const { slots, clock } = slowReceiver();
    slots.stepAside(OWNER, "slow.example", "job-1");
    expect(slots.give(OWNER, "slow.example", quick)).toEqual(["job-1"]);
    clock.now += 10;
    expect(slots.tryTake(OWNER, "slow.example")).toBe(true);
    expect(slots.give(OWNER, "slow.example", quick)).toEqual([]);
  });

  it("calls back none at a slow or missing answer: their delays still hold", () => {
    const { slots, clock } = slowReceiver();
    slots.stepAside(OWNER, "slow.example", "job-1");
    clock.now += 1_000;
    expect(slots.give(OWNER, "slow.example", slowAnswer)).toEqual([]);
    expect(slots.give(OWNER, "slow.example", unanswered)).toEqual([]);
    // They are still remembered for the quick answer to come.
    expect(slots.tryTake(OWNER, "slow.example")).toBe(true);
    expect(slots.give(OWNER, "slow.example", quick)).toEqual(["job-1"]);
  });

  it("leaves a job due back within the least step-aside, or already back, to come by itself", () => {
    const { slots, clock } = slowReceiver();
    const wait = slots.stepAside(OWNER, "slow.example", "soon");
    slots.stepAside(OWNER, "slow.example", "later");
    clock.now += wait - STEP_ASIDE_MS;
    expect(slots.give(OWNER, "slow.example", quick)).toEqual(["later"]);
  });

  it("does not call back the jobs in line at a receiver answering quickly: their line already moves at its pace", () => {
    const { slots } = slotsAt();
    // Quick, but 4 s an attempt: a line of 300 reaches past the least step-aside.
    const quickButLong = { durationMs: 4_000, answered: true };
    fill(slots, "quick.example");
    expect(slots.give(OWNER, "quick.example", quickButLong)).toEqual([]);
    fill(slots, "quick.example");
    const waits = Array.from({ length: 300 }, (_, i) => slots.stepAside(OWNER, "quick.example", `job-${i}`));
    expect(Math.max(...waits)).toBeGreaterThan(2 * STEP_ASIDE_MS);
    expect(slots.give(OWNER, "quick.example", quickButLong)).toEqual([]);
  });

  it("does not remember a job that steps aside without its id", () => {
    const { slots } = slowReceiver();
    slots.stepAside(OWNER, "slow.example");
    expect(slots.give(OWNER, "slow.example", quick)).toEqual([]);
  });

  it("calls back a receiver's jobs that stepped aside in the owner's line, once that receiver answers quickly", () => {
    const { slots, clock } = slotsAt();
    // Two receivers that hang hold the owner's bound on slow receivers; past SLOW_MS of silence they count as slow.
    fill(slots, "hang-a.example");
    fill(slots, "hang-b.example");
    clock.now += SLOW_MS + 1_000;
    expect(slots.tryTake(OWNER, "new.example")).toBe(false);
    expect(slots.stepAside(OWNER, "new.example", "new-1")).toBeGreaterThanOrEqual(SLOW_MS);
    // One hanging attempt times out: a slot for the new receiver, which answers quickly.
    expect(slots.give(OWNER, "hang-a.example", unanswered)).toEqual([]);
    expect(slots.tryTake(OWNER, "new.example")).toBe(true);
    expect(slots.give(OWNER, "new.example", quick)).toEqual(["new-1"]);
  });

  it("calls back only the quick receiver's jobs, and only its own owner's", () => {
    const { slots, clock } = slowReceiver();
    slots.stepAside(OWNER, "slow.example", "alice-1");
    // Another owner's share of the same receiver, slow as well, with a job of its own stepping aside.
    while (slots.tryTake("bob", "slow.example"));
    clock.now += slowAnswer.durationMs;
    slots.give("bob", "slow.example", slowAnswer);
    while (slots.tryTake("bob", "slow.example"));
    slots.stepAside("bob", "slow.example", "bob-1");
    expect(slots.give(OWNER, "slow.example", quick)).toEqual(["alice-1"]);
    expect(slots.give("bob", "slow.example", quick)).toEqual(["bob-1"]);
  });
});
