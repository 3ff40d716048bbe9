import { describe, expect, it } from "vitest";
import { RETRY_AFTER_MAX_MS } from "../../src/notify/retry-policy.ts";
import { nextRetry, PROVIDER_RETRY_MS, type RetryInput } from "../../src/notify/retry-steps.ts";

const DEFAULT_SCHEDULE = [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000];
const middle = () => 0.5; // no jitter: 1 - 0.2 + 0.4 × 0.5 = 1

const after = (stepsTaken: number, providerUnavailable: boolean, extra: Partial<RetryInput> = {}) =>
  nextRetry({ stepsTaken, scheduleMs: DEFAULT_SCHEDULE, providerUnavailable, random: middle, ...extra });

/** Every wait of a notification that fails the same way until it gives up, from its first attempt. */
function waitsUntilGivenUp(providerUnavailable: boolean, scheduleMs = DEFAULT_SCHEDULE): number[] {
  const waits: number[] = [];
  let stepsTaken = 0;
  for (;;) {
    const next = nextRetry({ stepsTaken, scheduleMs, providerUnavailable, random: middle });
    if (next === null) return waits;
    waits.push(next.delayMs);
    stepsTaken += next.steps;
  }
}
const sum = (values: number[]) => values.reduce((total, value) => total + value, 0);

describe("the retry of a recipient's failure", () => {
  it("waits out RETRY_SCHEDULE's slots one by one and gives up after the last, as before", () => {
    expect(waitsUntilGivenUp(false)).toEqual(DEFAULT_SCHEDULE);
  });

  it("takes all of a slot's steps: its second failure waits 5 minutes", () => {
    expect(after(0, false)).toEqual({ delayMs: 5_000, steps: 1 });
    expect(after(1, false)).toEqual({ delayMs: 300_000, steps: 10 });
    expect(after(11, false)).toEqual({ delayMs: 1_800_000, steps: 60 });
  });

  it("after an outage waits what is left of the slot the outage reached", () => {
    // 1 + 10 steps for the first two slots, then 20 of the 30-minute slot's 60 spent on the outage.
    expect(after(31, false)).toEqual({ delayMs: 40 * 30_000, steps: 40 });
  });
});

describe("the retry of the provider's failure (SMTP server or Twilio unreachable, busy or failing)", () => {
  it("waits at most PROVIDER_RETRY_MS (30 s), one step at a time, where the recipient's would wait 5 minutes or hours", () => {
    expect(PROVIDER_RETRY_MS).toBe(30_000);
    expect(after(0, true)).toEqual({ delayMs: 5_000, steps: 1 });
    expect(after(1, true)).toEqual({ delayMs: 30_000, steps: 1 });
    expect(after(500, true)).toEqual({ delayMs: 30_000, steps: 1 });
  });

  it("keeps trying for as long as the whole schedule lasts (27 h 35 m by default) before it gives up", () => {
    const waits = waitsUntilGivenUp(true);
    expect(sum(waits)).toBe(sum(DEFAULT_SCHEDULE));
    expect(Math.max(...waits)).toBe(30_000);
    expect(waits).toHaveLength(1 + 10 + 60 + 240 + 600 + 1_200 + 1_200);
  });

  it("cuts a slot that is not a whole number of intervals into equal steps shorter than the interval", () => {
    const waits = waitsUntilGivenUp(true, [100_000]);
    expect(waits).toEqual([25_000, 25_000, 25_000, 25_000]);
  });

  it("follows a schedule whose slots are all shorter than the interval exactly as the recipient's", () => {
    const schedule = [100, 200, 300];
    expect(waitsUntilGivenUp(true, schedule)).toEqual(schedule);
    expect(waitsUntilGivenUp(false, schedule)).toEqual(schedule);
  });

  it("uses the interval it is given", () => {
    expect(after(1, true, { providerRetryMs: 500 })).toEqual({ delayMs: 500, steps: 1 });
  });

  it("spreads its wait by ±20 %", () => {
    expect(after(1, true, { random: () => 0 })!.delayMs).toBe(24_000);
    expect(after(1, true, { random: () => 0.999999 })!.delayMs).toBe(36_000);
  });

  it("waits at least the provider's Retry-After (clamped to 24 h), and no longer than the interval without one", () => {
    expect(after(1, true, { retryAfterMs: 120_000 })).toEqual({ delayMs: 120_000, steps: 1 });
    expect(after(1, true, { retryAfterMs: 10_000 })).toEqual({ delayMs: 30_000, steps: 1 });
    expect(after(1, true, { retryAfterMs: 7 * 24 * 3_600_000 })!.delayMs).toBe(RETRY_AFTER_MAX_MS);
  });

  it("gives up once the schedule's steps are spent, whatever the kind of failure", () => {
    const total = 1 + 10 + 60 + 240 + 600 + 1_200 + 1_200;
    expect(after(total, true)).toBeNull();
    expect(after(total, false)).toBeNull();
    expect(nextRetry({ stepsTaken: 0, scheduleMs: [], providerUnavailable: true, random: middle })).toBeNull();
  });
});
