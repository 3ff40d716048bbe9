// What a worker says when its close runs out of time: a slow job with Redis answering is not
// a Redis problem, and the log must not send the operator looking for one.
import { describe, expect, it } from "vitest";
import type { QueueName } from "../../src/queue/names.ts";
import { unclosedWarning } from "../../src/queue/run-workers.ts";

const active = (entries: Array<[QueueName, number]>) => new Map<QueueName, number>(entries);

describe("unclosedWarning", () => {
  it("names the queues whose jobs are still running, and that they run again, when Redis answers", () => {
    const [fields, message] = unclosedWarning(20_000, active([["transactions", 0], ["deliver-webhook", 2]]), 0);
    expect(fields).toEqual({ timeoutMs: 20_000, activeJobs: { "deliver-webhook": 2 }, unreadyConnections: 0 });
    expect(message).toContain("active jobs did not finish within 20000 ms: deliver-webhook (2)");
    expect(message).toContain("they run again once their locks expire");
    expect(message).not.toMatch(/redis/i);
  });

  it("asks about Redis only when a connection is not ready", () => {
    const [fields, message] = unclosedWarning(20_000, active([["deliver-webhook", 1]]), 2);
    expect(fields).toMatchObject({ unreadyConnections: 2, activeJobs: { "deliver-webhook": 1 } });
    expect(message).toBe("workers did not close: Redis is not reachable (2 of their connections are not ready); stopping without them");
  });

  it("says only that the workers did not close when no job is running and Redis answers", () => {
    expect(unclosedWarning(1_000, active([["risk", 0]]), 0)[1]).toBe("workers did not close within 1000 ms; stopping without them");
  });
});
