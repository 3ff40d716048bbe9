// The repeat gate behind the worker's error log: a failure repeated many times a second
// (every reconnect attempt while Redis is down) makes one line per window, not one per attempt.
import { describe, expect, it } from "vitest";
import { createRepeatGate, errorKind } from "../../src/log-repeats.ts";

describe("createRepeatGate", () => {
  it("lets the first of a kind through, holds back its repeats within the window, then counts them", () => {
    let now = 0;
    const gate = createRepeatGate(60_000, () => now);
    expect(gate("ECONNREFUSED")).toEqual({ log: true, suppressed: 0 });
    for (let i = 1; i <= 5; i++) {
      now += 1_000;
      expect(gate("ECONNREFUSED")).toEqual({ log: false, suppressed: i });
    }
    now = 60_000;
    expect(gate("ECONNREFUSED")).toEqual({ log: true, suppressed: 5 });
    expect(gate("ECONNREFUSED").log).toBe(false);
  });

  it("keeps kinds apart: a new kind of error is logged at once", () => {
    const gate = createRepeatGate(60_000, () => 0);
    expect(gate("ECONNREFUSED").log).toBe(true);
    expect(gate("ECONNRESET").log).toBe(true);
    expect(gate("ECONNREFUSED").log).toBe(false);
  });
});

describe("errorKind", () => {
  it("is the system error code when there is one, else the message", () => {
    expect(errorKind(Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:6379"), { code: "ECONNREFUSED" }))).toBe("ECONNREFUSED");
    expect(errorKind(new Error("Connection is closed."))).toBe("Connection is closed.");
    expect(errorKind(undefined)).toBe("undefined");
  });
});
