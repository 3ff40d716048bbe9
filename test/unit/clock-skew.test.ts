// The judgment of a process's clock against PostgreSQL's (src/clock-skew.ts): how a reading is
// made from the clock before and after the query, and that it is "off" only when it is more
// than the bound away even at the near end of its uncertainty.
import { describe, expect, it } from "vitest";
import { CLOCK_SKEW_BOUND_MS, clockIsOff, clockReading, describeSkew, formatSeconds, judgeClock, toSeconds } from "../../src/clock-skew.ts";

describe("a clock reading", () => {
  it("compares PostgreSQL's time with the middle of the round trip: positive when this clock is ahead", () => {
    // Asked at 1,000,120,000 and answered 40 ms later; PostgreSQL said 1,000,000,020.
    expect(clockReading(1_000_120_000, 1_000_000_020, 1_000_120_040)).toEqual({ aheadMs: 120_000, uncertaintyMs: 20 });
    expect(clockReading(1_000_000_000, 1_000_660_010, 1_000_000_020)).toEqual({ aheadMs: -660_000, uncertaintyMs: 10 });
  });
});

describe("whether a clock is off", () => {
  const bound = CLOCK_SKEW_BOUND_MS;

  it("is bound by 5 s", () => {
    expect(bound).toBe(5_000);
  });

  it("is not off at the bound, nor just under it, ahead or behind", () => {
    for (const aheadMs of [bound, -bound, bound - 1, -(bound - 1), 0, 1]) {
      expect(clockIsOff({ aheadMs, uncertaintyMs: 0 }), String(aheadMs)).toBe(false);
    }
  });

  it("is off just over the bound, ahead or behind", () => {
    for (const aheadMs of [bound + 1, -(bound + 1), 120_000, -660_000]) {
      expect(clockIsOff({ aheadMs, uncertaintyMs: 0 }), String(aheadMs)).toBe(true);
    }
  });

  it("gives an uncertain reading the benefit of the doubt: off only when beyond the bound by more than its uncertainty", () => {
    expect(clockIsOff({ aheadMs: bound + 300, uncertaintyMs: 300 })).toBe(false);
    expect(clockIsOff({ aheadMs: bound + 300, uncertaintyMs: 299 })).toBe(true);
    expect(clockIsOff({ aheadMs: -(bound + 300), uncertaintyMs: 301 })).toBe(false);
    // A round trip that took 4 minutes says nothing about a 2-minute skew.
    expect(clockIsOff(clockReading(0, 0, 240_000))).toBe(false);
  });

  it("takes another bound when given one", () => {
    expect(clockIsOff({ aheadMs: 1_500, uncertaintyMs: 0 }, 1_000)).toBe(true);
    expect(clockIsOff({ aheadMs: 1_500, uncertaintyMs: 0 }, 2_000)).toBe(false);
  });
});

describe("whose clock is off, with Redis's as the witness", () => {
  const right = { aheadMs: 200, uncertaintyMs: 1 };
  const ahead = { aheadMs: 120_000, uncertaintyMs: 1 };

  it("is this process's when it is off from PostgreSQL's and from Redis's", () => {
    expect(judgeClock(ahead, ahead)).toEqual({ off: true, postgresOff: false });
  });

  it("is PostgreSQL's when Redis's agrees with this process's: the process goes on working", () => {
    expect(judgeClock(ahead, right)).toEqual({ off: false, postgresOff: true });
  });

  it("is nobody's when PostgreSQL's agrees, whatever Redis's says", () => {
    expect(judgeClock(right, ahead)).toEqual({ off: false, postgresOff: false });
    expect(judgeClock(right, right)).toEqual({ off: false, postgresOff: false });
  });

  it("is PostgreSQL's judgment alone without a Redis reading", () => {
    expect(judgeClock(ahead, undefined)).toEqual({ off: true, postgresOff: false });
    expect(judgeClock(right, undefined)).toEqual({ off: false, postgresOff: false });
  });
});

describe("what is said of a skew", () => {
  it("names the way and the size, and the bound", () => {
    expect(describeSkew({ aheadMs: 120_000, uncertaintyMs: 3 })).toBe("this process's clock is 120 s ahead of PostgreSQL's (bound 5 s)");
    expect(describeSkew({ aheadMs: -660_400, uncertaintyMs: 3 })).toBe("this process's clock is 660 s behind PostgreSQL's (bound 5 s)");
    expect(describeSkew({ aheadMs: 5_240, uncertaintyMs: 3 })).toBe("this process's clock is 5.2 s ahead of PostgreSQL's (bound 5 s)");
  });

  it("rounds seconds to a tenth under 100 s and to whole ones from there", () => {
    expect(formatSeconds(0)).toBe("0 s");
    expect(formatSeconds(-5_049)).toBe("5 s");
    expect(formatSeconds(99_940)).toBe("99.9 s");
    expect(formatSeconds(119_600)).toBe("120 s");
    expect(toSeconds(120_000.4)).toBe(120);
    expect(toSeconds(-1_234.5)).toBe(-1.234);
  });
});
