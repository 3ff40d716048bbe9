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

  it("takes the job's id out of BullMQ's answers about a job's lock or state, so one kind covers every job", () => {
    const bullmq = (message: string, code: number) => Object.assign(new Error(message), { code });
    expect(errorKind(bullmq("Missing lock for job ntf_01m8g3ct3hn5177911e71gq8j6. moveToFinished", -2))).toBe("missing lock: moveToFinished");
    expect(errorKind(bullmq("Missing lock for job ntf_01m8g3ct4435dxkkdee4z056tn. moveToFinished", -2))).toBe("missing lock: moveToFinished");
    expect(errorKind(bullmq("Missing lock for job bat_1. moveToDelayed", -2))).toBe("missing lock: moveToDelayed");
    expect(errorKind(bullmq("Lock mismatch for job ntf_2. Cmd moveToFinished from active", -6))).toBe("lock mismatch: moveToFinished from active");
    expect(errorKind(bullmq("Missing key for job ntf_3. moveToFinished", -1))).toBe("missing key: moveToFinished");
    expect(errorKind(bullmq("Job ntf_4 is not in the active state. moveToDelayed", -3))).toBe("not in the active state: moveToDelayed");
    // Anything else keeps its message.
    expect(errorKind(new Error("Missing lock for the queue"))).toBe("Missing lock for the queue");
  });
});
