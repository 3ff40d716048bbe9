// The workers' check for lost activity counters on a new deployment whose first batches are
// evaluated while a worker checks: workers starting together, one marking and evaluating while
// another, which read no mark, asks PostgreSQL (or a worker's own first check, still running
// behind its start's 2-second wait). Those batches were counted into this very Redis: nothing
// was lost, and no warning may send the operator to reseed.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkCounters, countersCompleteKey } from "../../src/pipeline/activity-reseed-watch.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { randomAddress } from "../helpers/chain.ts";
import { settled, startWorkers, track, tx } from "../helpers/pipeline.ts";
import { ingestTransactions } from "../helpers/seed.ts";

let t: TestApp;

beforeAll(async () => {
  t = await startTestApp("activity-reseed-workers-starting");
});
afterAll(async () => {
  await t.close();
});

describe("the check for lost activity counters", () => {
  it("reads batches evaluated after it found no mark as counted into this Redis: a new deployment, marked, no loss", async () => {
    const token = await t.token("desk");
    const wallet = await track(t, token);
    const workers = startWorkers(t);
    try {
      await ingestTransactions(t, token, [tx({ from: wallet.address, to: randomAddress(), blockTime: Math.floor(Date.now() / 1000) - 60 })]);
      await settled(t);
    } finally {
      await workers.close();
    }
    const key = countersCompleteKey(t.config.queuePrefix);
    await t.deps.redis.del(key);
    // The check read the (missing) mark a minute before that batch was evaluated.
    const checkedAt = new Date(Date.now() - 60_000);
    expect(await checkCounters({ ...t.deps, now: () => checkedAt })).toBe("fresh");
    expect(await t.deps.redis.get(key)).toContain("new deployment");

    // Batches evaluated before the mark was found missing are a loss.
    await t.deps.redis.del(key);
    expect(await checkCounters(t.deps)).toBe("missing");
  });
});
