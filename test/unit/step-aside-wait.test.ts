// How long a job steps aside when its receiver's slots are all taken (host-slots.ts stepAside):
// about a second at a receiver that answers quickly, at least the attempt's duration (the
// timeout) while it is slow or silent, longer the more jobs stand before it, and never more
// than the bound.
import { describe, expect, it } from "vitest";
import { createHostSlots } from "../../src/notify/host-slots.ts";

/** One owner throughout: each owner's share of a receiver is its own (the per-owner tests are in host-slots.test.ts). */
const OWNER = "alice";
const FLOOR = 20;
const TIMEOUT_MS = 15_000;
const MAX_MS = 5 * 60_000;
const unanswered = { durationMs: TIMEOUT_MS, answered: false };
const quick = { durationMs: 20, answered: true };

/** Host slots on a clock the test moves; `random` fixed at the middle of its range unless given. */
function slotsAt(random = () => 0.5) {
  const clock = { now: 1_000_000 };
  const slots = createHostSlots({
    floor: FLOOR,
    ceiling: 200,
    slowMs: 5_000,
    stepAsideMs: 1_000,
    maxStepAsideMs: MAX_MS,
    now: () => clock.now,
    random,
  });
  return { slots, clock };
}

/** Fills the receiver's slots (its cap is the floor at first). */
function fill(slots: ReturnType<typeof slotsAt>["slots"], host: string, count = FLOOR): void {
  for (let i = 0; i < count; i++) expect(slots.tryTake(OWNER, host)).toBe(true);
  expect(slots.tryTake(OWNER, host)).toBe(false);
}

/** One round at a receiver that hangs: `ms` later, every attempt in flight ends unanswered, and the slots are taken again. */
function timeout(slots: ReturnType<typeof slotsAt>["slots"], clock: { now: number }, ms = TIMEOUT_MS): void {
  clock.now += ms;
  for (let i = 0; i < FLOOR; i++) slots.give(OWNER, "hang.example", unanswered);
  fill(slots, "hang.example");
}

/**
 * A receiver that hangs, with a backlog: every slot taken, a job turned away just before they
 * time out, then the slots taken again.
 */
function hangingReceiver(random?: () => number) {
  const { slots, clock } = slotsAt(random);
  fill(slots, "hang.example");
  clock.now += TIMEOUT_MS - 1_000;
  slots.stepAside(OWNER, "hang.example");
  timeout(slots, clock, 1_000);
  return { slots, clock };
}

describe("stepAside", () => {
  it("sends a job away for about a second (±50 %) from a receiver that answers quickly, as before", () => {
    for (const r of [0, 0.5, 0.999]) {
      const { slots } = slotsAt(() => r);
      fill(slots, "quick.example");
      // A quick answer: one slot free again, and the cap one larger.
      slots.give(OWNER, "quick.example", quick);
      fill(slots, "quick.example", 2);
      expect(slots.stepAside(OWNER, "quick.example")).toBe(Math.round(1_000 * (0.5 + r)));
    }
  });

  it("sends a job away for at least the timeout while the receiver's attempts time out", () => {
    const { slots } = hangingReceiver();
    for (let i = 0; i < 5; i++) expect(slots.stepAside(OWNER, "hang.example")).toBeGreaterThanOrEqual(TIMEOUT_MS);
  });

  it("lines the jobs up at the pace the receiver takes attempts: each one more behind it waits an attempt over its slots longer", () => {
    const { slots } = hangingReceiver();
    const waits = Array.from({ length: 100 }, () => slots.stepAside(OWNER, "hang.example"));
    // 20 slots freed by 15 s timeouts: one job's turn every 0.75 s, after the first timeout to come.
    expect(waits.at(-1)).toBe(TIMEOUT_MS + 100 * (TIMEOUT_MS / FLOOR));
    expect(waits.slice(50)).toEqual([...waits.slice(50)].sort((a, b) => a - b));
    expect(waits[99]! - waits[49]!).toBe(50 * (TIMEOUT_MS / FLOOR));
  });

  it("never sends a job away for longer than the bound, however long the line", () => {
    for (const r of [0, 0.999]) {
      const { slots } = hangingReceiver(() => r);
      const waits = Array.from({ length: 2_000 }, () => slots.stepAside(OWNER, "hang.example"));
      expect(Math.max(...waits)).toBeLessThanOrEqual(MAX_MS);
      // Those far back are spread over the bound's last quarter, not sent back all at once.
      expect(waits.at(-1)).toBe(Math.round(MAX_MS * (0.75 + r / 4)));
    }
  });

  it("shortens the line again as time passes: the jobs before have had their turn", () => {
    const { slots, clock } = hangingReceiver();
    const first = Array.from({ length: 100 }, () => slots.stepAside(OWNER, "hang.example")).at(-1)!;
    for (let round = 0; round < 4; round++) timeout(slots, clock);
    // A minute later the line ends a minute sooner from now.
    expect(slots.stepAside(OWNER, "hang.example")).toBe(first - 4 * TIMEOUT_MS + TIMEOUT_MS / FLOOR);
  });

  it("waits out a receiver's silence before its first attempt ends: all slots busy for 10 s, nothing back", () => {
    const { slots, clock } = slotsAt();
    fill(slots, "silent.example");
    expect(slots.stepAside(OWNER, "silent.example")).toBe(1_000);
    clock.now += 10_000;
    expect(slots.stepAside(OWNER, "silent.example")).toBeGreaterThanOrEqual(10_000);
  });

  it("remembers a receiver that hangs while jobs stepping aside are still due back, though nothing is in flight", () => {
    const { slots, clock } = hangingReceiver();
    slots.stepAside(OWNER, "hang.example");
    timeout(slots, clock, 1_000);
    expect(slots.stepAside(OWNER, "hang.example")).toBeGreaterThanOrEqual(TIMEOUT_MS);
  });

  it("starts a fresh line once the receiver answers quickly again", () => {
    const { slots } = hangingReceiver();
    for (let i = 0; i < 200; i++) slots.stepAside(OWNER, "hang.example");
    for (let i = 0; i < FLOOR; i++) slots.give(OWNER, "hang.example", quick);
    fill(slots, "hang.example", 2 * FLOOR);
    expect(slots.stepAside(OWNER, "hang.example")).toBe(1_000);
  });

  it("keeps one receiver's line from another's", () => {
    const { slots } = hangingReceiver();
    for (let i = 0; i < 200; i++) slots.stepAside(OWNER, "hang.example");
    fill(slots, "quick.example");
    slots.give(OWNER, "quick.example", quick);
    fill(slots, "quick.example", 2);
    expect(slots.stepAside(OWNER, "quick.example")).toBe(1_000);
  });
});
