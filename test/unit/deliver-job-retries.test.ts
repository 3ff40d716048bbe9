// BullMQ's own retries of a delivery job (PostgreSQL unreachable inside the processor) back
// off exponentially. Once they run out the job is failed, and the reconciler's next sweep
// starts it afresh: so how long they last bounds how late deliveries resume after an outage.
import { describe, expect, it } from "vitest";
import { RECONCILE_EVERY_MS } from "../../src/pipeline/reconcile-schedule.ts";
import { DELIVER_JOB_OPTIONS } from "../../src/queue/deliveries.ts";

/** The waits BullMQ's "exponential" backoff puts between a job's attempts. */
function backoffWaitsMs(attempts: number, delayMs: number): number[] {
  return Array.from({ length: attempts - 1 }, (_, i) => 2 ** i * delayMs);
}

describe("a delivery job's infrastructure retries", () => {
  const { attempts, backoff } = DELIVER_JOB_OPTIONS;
  const waits = backoffWaitsMs(attempts, backoff.delay);

  it("ride out a PostgreSQL restart of a few seconds", () => {
    expect(waits.reduce((sum, ms) => sum + ms, 0)).toBeGreaterThanOrEqual(10_000);
  });

  it("never wait longer than a reconciler period, so deliveries resume within about one sweep after an outage", () => {
    // With 11 attempts the last waits were 256 s and 512 s: after a ten-minute outage a
    // delivery could sit up to seven more minutes in BullMQ's delayed set.
    expect(Math.max(...waits)).toBeLessThanOrEqual(RECONCILE_EVERY_MS);
  });
});
