// Upgrading an existing deployment to the version that records the counters' token in
// PostgreSQL: its database holds evaluated batches and no token, and its Redis holds the
// counters (and the earlier version's key, without a token, or none). Nothing was lost: the
// first check writes one token to both without a warning, and a loss after that is noticed.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { activityKeys } from "../../src/pipeline/activity.ts";
import { readCountersMark } from "../../src/pipeline/activity-reseed-queries.ts";
import { countersCompleteKey, tokenIn } from "../../src/pipeline/activity-reseed-watch.ts";
import { watchedCountersMonitor } from "../helpers/activity-history.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { randomAddress } from "../helpers/chain.ts";
import { settled, startWorkers, track, tx } from "../helpers/pipeline.ts";
import { ingestTransactions } from "../helpers/seed.ts";

let t: TestApp;

beforeAll(async () => {
  t = await startTestApp("activity-reseed-upgrade");
});
afterAll(async () => {
  await t.close();
});

describe("the check for lost activity counters after an upgrade", () => {
  it("writes one token to both without warning on an upgraded deployment, then warns once when Redis loses the key", async () => {
    // An upgraded deployment: batches evaluated (and counted) by real workers, no token recorded,
    // and the counters in Redis under an earlier version's key.
    const token = await t.token("desk");
    const wallet = await track(t, token);
    const workers = startWorkers(t);
    try {
      await ingestTransactions(t, token, [1, 2].map((k) => tx({ from: wallet.address, to: randomAddress(), blockTime: Math.floor(Date.now() / 1000) - k * 60 })));
      await settled(t);
    } finally {
      await workers.close();
    }
    const key = countersCompleteKey(t.config.queuePrefix);
    await t.deps.redis.set(key, JSON.stringify({ how: "new deployment", at: new Date().toISOString() }));
    expect(await t.deps.redis.exists(...Object.values(activityKeys(t.config.queuePrefix, wallet.address)))).toBeGreaterThan(0);
    expect(await readCountersMark(t.deps.sql)).toBeUndefined();

    const { monitor, warnings, gauge } = watchedCountersMonitor(t);

    expect(await monitor.check()).toBe("fresh");
    expect(await monitor.check()).toBe("complete");
    expect(warnings()).toEqual([]);
    expect(await gauge()).toBe(0);
    const recorded = await readCountersMark(t.deps.sql);
    expect(recorded?.token).toEqual(expect.any(String));
    expect(tokenIn(await t.deps.redis.get(key))).toBe(recorded!.token);

    // Now Redis loses the key: the recorded token says it is a loss.
    await t.deps.redis.del(key);
    expect(await monitor.check()).toBe("missing");
    expect(await monitor.check()).toBe("missing");
    expect(warnings()).toHaveLength(1);
    expect(await gauge()).toBe(1);
  });

  it("takes an upgraded deployment whose Redis holds no key yet as complete too", async () => {
    // The same, in a Redis that never held the earlier version's key (its workers never checked).
    await t.deps.sql`delete from activity_counters_mark`;
    const key = countersCompleteKey(t.config.queuePrefix);
    await t.deps.redis.del(key);
    const { monitor, warnings } = watchedCountersMonitor(t);
    expect(await monitor.check()).toBe("fresh");
    expect(await monitor.check()).toBe("complete");
    expect(warnings()).toEqual([]);
    expect(tokenIn(await t.deps.redis.get(key))).toBe((await readCountersMark(t.deps.sql))?.token);
  });
});
