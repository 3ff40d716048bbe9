// npm run reseed-activity after Redis lost the activity counters, end to end: history counted
// by the real pipeline (HTTP ingest → Postgres → real workers → Redis), the activity keys
// deleted (what a flushed or replaced Redis does to them), the reseed, then the counters and
// what fires. The command's process and the worker's warning are in activity-reseed-cli.test.ts.
import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { activityKeys, applyActivityInOrder } from "../../src/pipeline/activity.ts";
import { ReseedRefused, reseedActivity } from "../../src/pipeline/activity-reseed.ts";
import { replaySteps } from "../../src/pipeline/activity-reseed-plan.ts";
import { loadTrackedAddresses } from "../../src/pipeline/activity-reseed-queries.ts";
import { countersCompleteKey } from "../../src/pipeline/activity-reseed-watch.ts";
import { loadBatchTransactions } from "../../src/db/queries/pipeline.ts";
import type { Transaction } from "../../src/domain/types.ts";
import { burstOfFive, busyWeek as busyWeekOf, countersOf, evaluatedBy, ingestInChainOrder } from "../helpers/activity-history.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { randomAddress } from "../helpers/chain.ts";
import { createAlert, eventsOf, startWorkers, track, tx } from "../helpers/pipeline.ts";
import { ingestTransactions } from "../helpers/seed.ts";

let t: TestApp;
let redis: Redis;
let prefix: string;
let token: string;
const HOUR = 3_600;
/** The bursts' hour: the last whole hour before now, so that nothing is ahead of the clock. */
const H0 = Math.floor(Date.now() / 1000 / HOUR) - 1;

beforeAll(async () => {
  t = await startTestApp("activity-reseed");
  redis = t.deps.redis;
  prefix = t.config.queuePrefix;
  token = await t.token("desk");
});
afterAll(async () => {
  await t.close();
});

const evaluated = (ingest: () => Promise<unknown>) => evaluatedBy(t, ingest);

const ingestInBatches = (txs: Transaction[], size: number) => ingestInChainOrder(t, token, txs, size);

const busyWeek = (wallet: string, hours = 168) => busyWeekOf(wallet, H0, hours);

/** Five sends in the first five minutes of the burst's hour. */
const burst = (wallet: string) => burstOfFive(wallet, H0);

/** A wallet with an unusual_activity alert at 4× its baseline. */
async function walletWithAlert() {
  const wallet = await track(t, token);
  const alertId = await createAlert(t, token, { walletId: wallet.walletId, condition: "unusual_activity", threshold: 4 });
  return { address: wallet.address, alertId };
}

/** What a flushed or replaced Redis leaves of the counters: nothing (every key under the prefix named activity*). */
async function loseActivityKeys(): Promise<void> {
  let cursor = "0";
  do {
    const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix}:activity*`, "COUNT", 1_000);
    cursor = next;
    if (keys.length > 0) await redis.del(...keys);
  } while (cursor !== "0");
}

describe("npm run reseed-activity after Redis lost the activity counters", () => {
  it("restores the counters as they were; a burst that fires on the floor baseline without the reseed does not fire after it", async () => {
    const lost = await walletWithAlert();
    const reseeded = await walletWithAlert();
    await evaluated(() => ingestInBatches([...busyWeek(lost.address), ...busyWeek(reseeded.address)], 112));
    const before = await countersOf(t, reseeded.address);
    expect(before.hotState).not.toBeNull();
    expect(Object.keys(before.hours).length).toBeGreaterThan(100);

    await loseActivityKeys();
    // Without the reseed: the week is gone, the baseline is the floor of 1 an hour, and the 4th send fires.
    await evaluated(() => ingestTransactions(t, token, burst(lost.address)).then(() => {}));
    expect(await eventsOf(t, lost.alertId)).toMatchObject([{ condition: "unusual_activity", observed: 4 }]);

    const summary = await reseedActivity(t.deps);
    expect(summary.batches).toBeGreaterThanOrEqual(7);
    expect(summary.transactions).toBeGreaterThanOrEqual(2 * 336 + 5);
    expect(await countersOf(t, reseeded.address)).toEqual(before);
    expect(await redis.get(countersCompleteKey(prefix))).toContain("reseeded");

    // With it: the baseline is 2 an hour again, the limit 8, and the same burst fires nothing.
    await evaluated(() => ingestTransactions(t, token, burst(reseeded.address)).then(() => {}));
    expect(await eventsOf(t, reseeded.alertId)).toEqual([]);
    // Nothing fired during the reseed itself either (its answers are thrown away).
    expect(await eventsOf(t, lost.alertId)).toHaveLength(1);
  });

  it("counts nothing twice: run again, and run again after a run cut off mid-replay", async () => {
    const wallet = await walletWithAlert();
    await evaluated(() => ingestInBatches(busyWeek(wallet.address, 12), 6));
    await reseedActivity(t.deps);
    const once = await countersOf(t, wallet.address);
    expect(once.hotState).not.toBeNull();

    const again = await reseedActivity(t.deps);
    expect(await countersOf(t, wallet.address)).toEqual(once);

    // Cut off mid-replay: its first batch counted (and marked counted) on top of the rebuilt
    // counters, the rest not. The next run rebuilds from nothing and clears the markers first.
    const [firstBatch] = await t.deps.sql<{ id: string; evaluatedAt: string }[]>`
      select b.id, b.evaluated_at as "evaluatedAt" from ingest_batches b
      where exists (select 1 from transactions t where t.batch_id = b.id and t.from_address = ${wallet.address})
      order by b.created_at, b.id limit 1`;
    const txs = await loadBatchTransactions(t.deps.sql, [firstBatch!.id]);
    const batch = { id: firstBatch!.id, evaluatedAt: new Date(firstBatch!.evaluatedAt), transactionCount: txs.length };
    await applyActivityInOrder(redis, prefix, replaySteps([batch], txs, new Set(await loadTrackedAddresses(t.deps.sql))));
    expect((await countersOf(t, wallet.address)).hotState).not.toEqual(once.hotState);
    const third = await reseedActivity(t.deps);
    expect(await countersOf(t, wallet.address)).toEqual(once);
    expect(third).toEqual(again);
  });

  it("refuses while an evaluation worker is connected, and leaves the counters alone", async () => {
    const wallet = await walletWithAlert();
    await evaluated(() => ingestInBatches(busyWeek(wallet.address, 3), 6));
    const before = await countersOf(t, wallet.address);
    expect(before.hotState).not.toBeNull();

    const workers = startWorkers(t, ["transactions"]);
    try {
      await workers.workers[0]!.waitUntilReady();
      const refusal = await reseedActivity(t.deps).catch((error: unknown) => error);
      expect(refusal).toBeInstanceOf(ReseedRefused);
      expect((refusal as Error).message).toMatch(/evaluation worker .* stop the workers that serve transactions first/);
      expect(await countersOf(t, wallet.address)).toEqual(before);
    } finally {
      await workers.close();
    }
    // Only an evaluation worker is in the way: one serving deliveries alone is not.
    const delivery = startWorkers(t, ["deliver-webhook"]);
    try {
      await delivery.workers[0]!.waitUntilReady();
      await expect(reseedActivity(t.deps)).resolves.toMatchObject({ trackedAddresses: expect.any(Number) });
    } finally {
      await delivery.close();
    }
  });

  it("writes the history older than the replayed 8 days: counterparties of 100 days and the newest send of 3 years", async () => {
    const wallet = await track(t, token);
    const payee = randomAddress();
    const payer = randomAddress();
    const oldSend = Math.floor(Date.now() / 1000) - 20 * 86_400;
    const old = [tx({ from: wallet.address, to: payee, blockTime: oldSend }), tx({ from: payer, to: wallet.address, blockTime: oldSend + 60 })];
    await evaluated(() => ingestTransactions(t, token, old).then(() => {}));
    // Ingested and evaluated 20 days ago, by a wallet tracked for 30.
    await t.deps.sql`update tracked_wallets set tracked_at = now() - interval '30 days' where address = ${wallet.address}`;
    await t.deps.sql`
      update ingest_batches set created_at = now() - interval '20 days', evaluated_at = now() - interval '20 days'
      where id in (select batch_id from transactions where from_address = ${wallet.address} or to_address = ${wallet.address})`;
    const before = await countersOf(t, wallet.address);

    await loseActivityKeys();
    const summary = await reseedActivity(t.deps);
    const after = await countersOf(t, wallet.address);
    // Not replayed (older than 8 days): no minute or hour buckets, as a week's quiet leaves them.
    expect(after.hotState).toBeNull();
    expect(after.hours).toEqual({});
    // What outlives the week is back as it was.
    expect(after.counterparties).toEqual(before.counterparties);
    expect(after.counterparties).toEqual([payee.slice(0, 12), payer.slice(0, 12)].sort());
    expect(after.lastSend).toBe(before.lastSend);
    expect(Number(after.lastSend)).toBe(oldSend);
    const keys = activityKeys(prefix, wallet.address);
    // Expiring as the live keys would: 100 days and 3 years from the newest dealing (the receipt, a minute after the send) and send.
    expect(await redis.ttl(keys.counterparties)).toBeGreaterThan(79 * 86_400);
    expect(await redis.ttl(keys.counterparties)).toBeLessThanOrEqual(80 * 86_400 + 60);
    expect(await redis.ttl(keys.lastSend)).toBeLessThanOrEqual(3 * 365 * 86_400 - 20 * 86_400);
    expect(summary.counterpartySets).toBeGreaterThanOrEqual(1);
    expect(summary.lastSends).toBeGreaterThanOrEqual(1);
  });
});
