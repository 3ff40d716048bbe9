// npm run reseed-activity against what an uninterrupted Redis holds, in the cases the first
// version got wrong: batches whose evaluation order differs from their ingest order (an ingest
// that committed after a later one was evaluated), history back-filled long after its block
// time, and a step slower than the reseed's lock. Counted by the real pipeline (HTTP ingest →
// Postgres → real workers → Redis), the keys deleted, then the reseed.
import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { activityKeys, counterpartyKey } from "../../src/pipeline/activity.ts";
import { reseedActivity } from "../../src/pipeline/activity-reseed.ts";
import type { Transaction } from "../../src/domain/types.ts";
import { countersOf } from "../helpers/activity-history.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { randomAddress } from "../helpers/chain.ts";
import { settled, startWorkers, track, tx } from "../helpers/pipeline.ts";
import { ingestTransactions } from "../helpers/seed.ts";

let t: TestApp;
let redis: Redis;
let prefix: string;
let token: string;
const DAY = 86_400;

beforeAll(async () => {
  t = await startTestApp("activity-reseed-fidelity");
  redis = t.deps.redis;
  prefix = t.config.queuePrefix;
  token = await t.token("desk");
});
afterAll(async () => {
  await t.close();
});

/** Ingests each list as a batch of its own and evaluates it with real workers before the next: the order they are counted in. */
async function evaluatedOneByOne(...batches: Transaction[][]): Promise<void> {
  const workers = startWorkers(t);
  try {
    for (const batch of batches) {
      await ingestTransactions(t, token, batch);
      await settled(t);
    }
  } finally {
    await workers.close();
  }
}

/** The batches that carry the address's transactions, oldest ingest first. */
async function batchesOf(address: string): Promise<string[]> {
  const rows = await t.deps.sql<{ id: string }[]>`
    select id from ingest_batches
    where id in (select batch_id from transactions where from_address = ${address} or to_address = ${address})
    order by created_at, id`;
  return rows.map((row) => row.id);
}

/** What a flushed Redis does to one address's counters. */
async function loseCounters(address: string): Promise<void> {
  await redis.del(...Object.values(activityKeys(prefix, address)));
}

describe("npm run reseed-activity rebuilds what the evaluation counted", () => {
  it("replays batches in the order they were evaluated: an ingest that committed after a later batch was evaluated counts after it", async () => {
    const wallet = await track(t, token);
    const payee = randomAddress();
    const now = Math.floor(Date.now() / 1000);
    // A send three days ago, then two sends to the same new payee ten minutes apart. The later
    // one's batch is evaluated first; the earlier one's ingest started first (its created_at is
    // the transaction's start) but committed after that evaluation, as concurrent ingests do.
    const quiet = [tx({ from: wallet.address, to: randomAddress(), blockTime: now - 3 * DAY })];
    const later = [tx({ from: wallet.address, to: payee, blockTime: now - 3_000 })];
    const earlier = [tx({ from: wallet.address, to: payee, blockTime: now - 3_600 })];
    await evaluatedOneByOne(quiet, later, earlier);
    const [, laterBatch, earlierBatch] = await batchesOf(wallet.address);
    await t.deps.sql`
      update ingest_batches set created_at = (select created_at from ingest_batches where id = ${laterBatch!}) - interval '1 millisecond'
      where id = ${earlierBatch!}`;
    const live = await countersOf(t, wallet.address);
    // Live, the later send ended the three days' silence, and the payee was new in its minute.
    expect(live.hotState!.numbers.slice(4, 6)).toEqual([now - 3_000, 3 * DAY - 3_000]);

    await loseCounters(wallet.address);
    await reseedActivity(t.deps);
    expect(await countersOf(t, wallet.address)).toEqual(live);
  });

  it("keeps back-filled history's counterparties and newest send as long as the live keys live: from when it was evaluated, not its block time", async () => {
    const wallet = await track(t, token);
    const payee = randomAddress();
    const payer = randomAddress();
    // Half a year old on chain, ingested (back-filled) and evaluated 20 days ago.
    const blockTime = Math.floor(Date.now() / 1000) - 180 * DAY;
    const backfill = [tx({ from: wallet.address, to: payee, blockTime }), tx({ from: payer, to: wallet.address, blockTime: blockTime + 60 })];
    await evaluatedOneByOne(backfill);
    await t.deps.sql`update tracked_wallets set tracked_at = now() - interval '30 days' where address = ${wallet.address}`;
    await t.deps.sql`
      update ingest_batches set created_at = now() - interval '20 days', evaluated_at = now() - interval '20 days'
      where id = any(${await batchesOf(wallet.address)}::text[])`;
    const live = await countersOf(t, wallet.address);
    expect(live.counterparties).toEqual([counterpartyKey(payee), counterpartyKey(payer)].sort());

    await loseCounters(wallet.address);
    await reseedActivity(t.deps);
    const after = await countersOf(t, wallet.address);
    // The live set, written 20 days ago with 100 days to live, still holds them for 80 days.
    expect(after.counterparties).toEqual(live.counterparties);
    expect(after.lastSend).toBe(String(blockTime));
    const keys = activityKeys(prefix, wallet.address);
    expect(await redis.ttl(keys.counterparties)).toBeGreaterThan(79 * DAY);
    expect(await redis.ttl(keys.counterparties)).toBeLessThanOrEqual(80 * DAY + 60);
    expect(await redis.ttl(keys.lastSend)).toBeGreaterThan(3 * 365 * DAY - 21 * DAY);
  });

  it("keeps its lock through a step slower than the lock's lifetime (a large deployment's history query)", async () => {
    const wallet = await track(t, token);
    await evaluatedOneByOne([tx({ from: wallet.address, to: randomAddress(), blockTime: Math.floor(Date.now() / 1000) - 600 })]);
    const lockMs = 500;
    const lockKey = `${prefix}:activity-reseeding`;
    // The older history's queries wait for this table lock: four lifetimes of the reseed's own.
    let locked!: () => void;
    const isLocked = new Promise<void>((resolve) => (locked = resolve));
    let heldMeanwhile: string | null = null;
    const holder = t.deps.sql.begin(async (sql) => {
      await sql`lock table transactions in access exclusive mode`;
      locked();
      await new Promise((resolve) => setTimeout(resolve, 4 * lockMs));
      // Still the reseed's: a second one started now is refused, not run beside it.
      heldMeanwhile = await redis.get(lockKey);
    });
    await isLocked;
    const reseeded = reseedActivity(t.deps, { lockMs });
    await holder;
    await expect(reseeded).resolves.toMatchObject({ trackedAddresses: expect.any(Number) });
    expect(heldMeanwhile).not.toBeNull();
    expect(await redis.exists(lockKey)).toBe(0);
  });
});
