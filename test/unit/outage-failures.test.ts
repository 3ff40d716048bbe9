// The worker's line for jobs failed by a PostgreSQL or Redis outage (src/queue/outage-failures.ts):
// once per kind of error a minute, counting the jobs of that kind since its last line by queue,
// the rest at debug, and never a stack.
import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { createLogger } from "../../src/logger.ts";
import { createOutageFailureLog } from "../../src/queue/outage-failures.ts";

function capture() {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  return { lines, logger: createLogger("debug", sink) };
}

const refused = () => Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" });

describe("the log of jobs failed by an outage", () => {
  it("warns at the first failure, then a minute later with the jobs failed meanwhile per queue, each one at debug", () => {
    const { lines, logger } = capture();
    let now = 0;
    const log = createOutageFailureLog(logger, 60_000, () => now);
    log("transactions", refused(), { jobId: "bat_1" });
    for (let i = 0; i < 93; i++) {
      now += 500;
      log("transactions", refused(), { jobId: `bat_${i + 2}` });
    }
    for (let i = 0; i < 5; i++) log("maintenance", refused());
    for (let i = 0; i < 10; i++) log("deliver-webhook", refused());
    now = 60_000;
    log("transactions", refused(), { jobId: "bat_last" });

    const warnings = lines.filter((line) => line.level === 40);
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toMatchObject({ jobId: "bat_1", code: "ECONNREFUSED", failedJobs: 1, failedJobsByQueue: { transactions: 1 } });
    expect(warnings[1]).toMatchObject({
      jobId: "bat_last",
      failedJobs: 109,
      failedJobsByQueue: { transactions: 94, maintenance: 5, "deliver-webhook": 10 },
      repeatsNotLogged: 108,
    });
    expect(String(warnings[0]!.msg)).toContain("re-enqueued by the reconciler");
    expect(lines.filter((line) => line.level === 20)).toHaveLength(108);
    for (const line of lines) {
      expect(line.cause).toBe("connect ECONNREFUSED 127.0.0.1:5432");
      expect(line).not.toHaveProperty("err");
      expect(JSON.stringify(line)).not.toContain("stack");
    }
  });

  it("counts each kind of error apart: a new kind is said at once, with its own count", () => {
    const { lines, logger } = capture();
    const log = createOutageFailureLog(logger, 60_000, () => 0);
    log("transactions", refused());
    log("transactions", refused());
    log("risk", Object.assign(new Error("write CONNECTION_CLOSED 127.0.0.1:5432"), { code: "CONNECTION_CLOSED" }));
    const warnings = lines.filter((line) => line.level === 40);
    expect(warnings.map((line) => [line.code, line.failedJobsByQueue])).toEqual([
      ["ECONNREFUSED", { transactions: 1 }],
      ["CONNECTION_CLOSED", { risk: 1 }],
    ]);
  });
});
