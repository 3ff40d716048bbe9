// The workers' check for lost activity counters when workers start together on a deployment
// that has no token yet: both find no row, one records its token and publishes it to Redis, and
// the other's insert meets that row. The token rule replaces the earlier guard (only batches
// evaluated before the check read the key counted as a loss): the first token is published before
// its row commits, and the other worker waits for that commit and reads the same token back, so
// it neither writes another token nor warns.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readCountersMark, recordFirstCountersMark } from "../../src/pipeline/activity-reseed-queries.ts";
import { checkCounters, countersCompleteKey, publishCountersMark, tokenIn } from "../../src/pipeline/activity-reseed-watch.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { randomAddress } from "../helpers/chain.ts";
import { waitForALockWait } from "../helpers/held-transaction.ts";
import { settled, startWorkers, track, tx } from "../helpers/pipeline.ts";
import { ingestTransactions } from "../helpers/seed.ts";

let t: TestApp;

beforeAll(async () => {
  t = await startTestApp("activity-reseed-workers-starting");
});
afterAll(async () => {
  await t.close();
});

describe("the check for lost activity counters, workers starting together", () => {
  it("a worker whose first token meets another's uncommitted one reads that token back: one token, no loss", async () => {
    const token = await t.token("desk");
    const wallet = await track(t, token);
    const workers = startWorkers(t);
    try {
      await ingestTransactions(t, token, [tx({ from: wallet.address, to: randomAddress(), blockTime: Math.floor(Date.now() / 1000) - 60 })]);
      await settled(t);
    } finally {
      await workers.close();
    }
    const prefix = t.config.queuePrefix;
    expect(await readCountersMark(t.deps.sql)).toBeUndefined();

    // The first worker has inserted its token and is about to publish it when the second checks.
    let inserted!: () => void;
    const insertedYet = new Promise<void>((resolve) => (inserted = resolve));
    let publishNow!: () => void;
    const published = new Promise<void>((resolve) => (publishNow = resolve));
    const first = recordFirstCountersMark(t.deps.sql, { token: "first-worker", how: "first check", setAt: new Date() }, async (mark) => {
      inserted();
      await published;
      await publishCountersMark(t.deps.redis, prefix, mark);
    });
    await insertedYet;
    const second = checkCounters(t.deps);
    await waitForALockWait(t.deps.sql, "the second worker's insert to wait for the first one's");
    publishNow();

    expect(await first).toMatchObject({ written: true, mark: { token: "first-worker" } });
    expect(await second).toBe("complete");
    expect((await readCountersMark(t.deps.sql))?.token).toBe("first-worker");
    expect(tokenIn(await t.deps.redis.get(countersCompleteKey(prefix)))).toBe("first-worker");
  });
});
