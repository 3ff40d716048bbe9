// The ingest admission's counting (src/http/ingest-admission.ts): at most `concurrency` admitted
// at once, the next ones in line first come first served, a full line or an over-long wait refused.
import { describe, expect, it } from "vitest";
import {
  createIngestAdmission,
  defaultIngestConcurrency,
  ingestAdmissionLimits,
  isIngestWrite,
  refusalRetryAfterSeconds,
  type Admission,
} from "../../src/http/ingest-admission.ts";

/** A wait that never runs out within a test. */
const LONG_WAIT_MS = 600_000;

function released(admission: Admission): () => void {
  if (!admission.admitted) throw new Error(`refused (${admission.reason}), expected admitted`);
  return admission.release;
}

describe("createIngestAdmission", () => {
  it("admits up to the concurrency at once, then queues, then refuses a request beyond the line at once", async () => {
    const admission = createIngestAdmission({ concurrency: 2, queueLength: 1, maxWaitMs: LONG_WAIT_MS });
    const first = released(await admission.enter());
    released(await admission.enter());
    expect(admission.storing()).toBe(2);
    const third = admission.enter();
    expect(admission.waiting()).toBe(1);
    expect(await admission.enter()).toEqual({ admitted: false, reason: "queue_full" });
    first();
    released(await third);
    expect(admission.storing()).toBe(2);
    expect(admission.waiting()).toBe(0);
    expect(admission.refused()).toEqual({ queue_full: 1, wait_exceeded: 0 });
  });

  it("hands turns over in the order the requests came", async () => {
    const admission = createIngestAdmission({ concurrency: 1, queueLength: 3, maxWaitMs: LONG_WAIT_MS });
    let release = released(await admission.enter());
    const order: number[] = [];
    const waiting = [1, 2, 3].map((n) =>
      admission.enter().then((entry) => {
        order.push(n);
        return entry;
      }),
    );
    for (const entry of waiting) {
      release();
      release = released(await entry);
    }
    expect(order).toEqual([1, 2, 3]);
    release();
    expect(admission.storing()).toBe(0);
  });

  it("refuses a request whose turn does not come within maxWaitMs, and takes it out of the line", async () => {
    const admission = createIngestAdmission({ concurrency: 1, queueLength: 1, maxWaitMs: 20 });
    const release = released(await admission.enter());
    expect(await admission.enter()).toEqual({ admitted: false, reason: "wait_exceeded" });
    expect(admission.waiting()).toBe(0);
    expect(admission.refused()).toEqual({ queue_full: 0, wait_exceeded: 1 });
    release();
    expect(admission.storing()).toBe(0);
  });

  it("counts a turn given back twice once", async () => {
    const admission = createIngestAdmission({ concurrency: 1, queueLength: 1, maxWaitMs: LONG_WAIT_MS });
    const release = released(await admission.enter());
    release();
    release();
    expect(admission.storing()).toBe(0);
    released(await admission.enter());
    expect(admission.storing()).toBe(1);
  });
});

describe("the admission's limits", () => {
  it("leaves two of the pool's connections to reads by default, at least one to ingest", () => {
    expect(defaultIngestConcurrency(10)).toBe(8);
    expect(defaultIngestConcurrency(3)).toBe(1);
    expect(defaultIngestConcurrency(2)).toBe(1);
    expect(ingestAdmissionLimits({ databasePoolSize: 10, ingestConcurrency: undefined })).toEqual({ concurrency: 8, queueLength: 32, maxWaitMs: 5_000 });
    expect(ingestAdmissionLimits({ databasePoolSize: 10, ingestConcurrency: 3 })).toEqual({ concurrency: 3, queueLength: 12, maxWaitMs: 5_000 });
  });

  it("draws Retry-After between 2 and 5 s", () => {
    expect(refusalRetryAfterSeconds(() => 0)).toBe(2);
    expect(refusalRetryAfterSeconds(() => 0.5)).toBe(4);
    expect(refusalRetryAfterSeconds(() => 0.999_999)).toBe(5);
  });

  it("applies to the POST routes under /v1/ingest/ only", () => {
    expect(isIngestWrite({ method: "POST", url: "/v1/ingest/transactions" })).toBe(true);
    expect(isIngestWrite({ method: "POST", url: "/v1/ingest/helius" })).toBe(true);
    expect(isIngestWrite({ method: "POST", url: "/v1/ingest/accounts" })).toBe(true);
    expect(isIngestWrite({ method: "GET", url: "/v1/transactions" })).toBe(false);
    expect(isIngestWrite({ method: "POST", url: "/v1/alerts" })).toBe(false);
  });
});
