// How the worker's 'failed' handler reads a failed run (run-workers.ts jobFailure): given up,
// an outage of our PostgreSQL or Redis (logged once a minute, attempts left or not), or any other failure. The
// errors are the clients' own, from a port nothing listens on; the channel errors are the
// words deliver.ts and disabled-notice.ts throw for a receiver or SMTP server that refused.
import { UnrecoverableError } from "bullmq";
import postgres from "postgres";
import { describe, expect, it } from "vitest";
import { jobFailure } from "../../src/queue/run-workers.ts";
import { createCommandRedis, createWorkerRedis } from "../../src/redis.ts";
import { freePort } from "../helpers/ports.ts";

async function rejection(run: () => Promise<unknown>): Promise<unknown> {
  try {
    await run();
  } catch (error) {
    return error;
  }
  throw new Error("expected a rejection");
}

describe("the kind of a failed job run", () => {
  it("takes errors of our PostgreSQL and Redis clients, with attempts left, for an outage", async () => {
    const port = await freePort();
    const sql = postgres(`postgres://app@127.0.0.1:${port}/wallet_alerts`, { max: 1, onnotice: () => {} });
    const refused = await rejection(() => sql`select 1`);
    await sql.end();
    expect((refused as { code?: unknown }).code).toBe("ECONNREFUSED");
    expect(jobFailure({ finishedOn: undefined }, refused)).toBe("outage");
    expect(jobFailure({ finishedOn: undefined }, new postgres.PostgresError({ message: "terminating connection due to administrator command", code: "57P01" } as never))).toBe("outage");

    // The API's fail-fast connection ("Stream isn't writeable …") and a worker's, closed.
    const command = createCommandRedis(`redis://127.0.0.1:${port}`, { retryStrategy: () => null });
    command.on("error", () => {});
    const worker = createWorkerRedis(`redis://127.0.0.1:${port}`, { lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 1 });
    worker.on("error", () => {});
    try {
      for (const error of [await rejection(() => command.get("x")), await rejection(() => worker.get("x"))]) {
        expect(jobFailure({ finishedOn: undefined }, error), String(error)).toBe("outage");
      }
    } finally {
      command.disconnect();
      worker.disconnect();
    }
  });

  it("takes a receiver's or a provider's connection error, in our own words, for a failure, not an outage", () => {
    // disabled-notice.ts: an SMTP server out of reach, retried on the schedule.
    expect(jobFailure({ finishedOn: undefined }, new Error("ECONNREFUSED: connect ECONNREFUSED"))).toBe("failed");
    expect(jobFailure({ finishedOn: undefined }, new Error("ECONNRESET: read ECONNRESET"))).toBe("failed");
  });

  it("takes a job given up for given up, whatever its error says", () => {
    // deliver.ts: a webhook whose schedule ran out on a receiver that refuses connections.
    expect(jobFailure({ finishedOn: Date.now() }, new UnrecoverableError("ECONNREFUSED: connect ECONNREFUSED 203.0.113.5:443 (gave up after 8 attempts)"))).toBe("given up");
    // Also when the job object is missing from the event, and by name (another copy of bullmq).
    expect(jobFailure(undefined, new UnrecoverableError("ECONNRESET: read ECONNRESET (gave up after 8 attempts)"))).toBe("given up");
    expect(jobFailure(undefined, Object.assign(new Error("ECONNREFUSED: connect ECONNREFUSED"), { name: "UnrecoverableError" }))).toBe("given up");
    // BullMQ's attempts spent (it stamps finishedOn only then) on any other error.
    expect(jobFailure({ finishedOn: Date.now() }, new Error("ECONNREFUSED: connect ECONNREFUSED"))).toBe("given up");
  });

  it("takes a job whose attempts ran out on a PostgreSQL outage for an outage: the reconciler starts it afresh", () => {
    // An outage that outlasts a job's BullMQ retries (half a minute) spends its attempts.
    const outage = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED", syscall: "connect" });
    expect(jobFailure({ finishedOn: Date.now() }, outage)).toBe("outage");
  });
});
