// large_outflow's 100 SOL cut-off through the real counters (batch facts, the Lua script in
// Redis, the factors): sends that total exactly 100 SOL reach it, by whichever of the script's
// sums they travel (the current hour, finished hours, a new address's first batch, late sends).
// In doubles nine sends of 10.1 SOL and one of 9.1 summed to 99.99999999999999 and missed it.
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BatchTransaction } from "../../src/db/queries/pipeline.ts";
import { riskFactors } from "../../src/domain/risk/index.ts";
import { applyBatchActivity } from "../../src/pipeline/activity.ts";
import { sidesByAddress } from "../../src/pipeline/batch-facts.ts";
import { randomAddress, randomSignature } from "../helpers/chain.ts";
import { uniqueQueuePrefix } from "../helpers/db.ts";
import { TEST_REDIS_URL } from "../helpers/env.ts";

let redis: Redis;
const prefix = uniqueQueuePrefix("large-outflow-exact");

beforeAll(() => {
  redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 1 });
});
afterAll(async () => {
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length > 0) await redis.del(...keys);
  redis.disconnect();
});

const T0 = 1_717_002_000;
const HOUR = 3_600;
const NINE_OF_10_1 = Array.from({ length: 9 }, () => 10.1);
const ONE_LAMPORT = 1e-9;

type Send = { amount: number; blockTime: number };

let batchCounter = 0;
/** Counts the sends as one ingest batch of SOL transfers from `wallet`; returns its 24 h outflow. */
async function countBatch(wallet: string, sends: readonly Send[]): Promise<number> {
  const batchId = `bat_outflow${batchCounter++}`;
  const txs: BatchTransaction[] = sends.map(({ amount, blockTime }) => ({
    signature: randomSignature(),
    leg: 0,
    type: "transfer",
    amount,
    token: "SOL",
    mint: null,
    from: wallet,
    to: randomAddress(),
    blockTime,
    slot: 1,
    fee: 0.000005,
    status: "success",
    batchId,
  }));
  const events = sidesByAddress(txs, new Set([wallet])).get(wallet)!.events;
  return (await applyBatchActivity(redis, prefix, [events])).get(wallet)!.solOutflow24h;
}

/** Counts each batch in turn; returns the 24 h outflow after the last. */
async function outflowAfter(batches: ReadonlyArray<readonly Send[]>): Promise<number> {
  const wallet = randomAddress();
  let outflow = 0;
  for (const sends of batches) outflow = await countBatch(wallet, sends);
  return outflow;
}

const largeOutflow = (solOutflow24h: number) =>
  riskFactors({
    counterpartyLabels: [],
    transactionsLastHour: 1,
    previous7DaysCount: 168,
    transactions24h: 10,
    failed24h: 0,
    solOutflow24h,
    balanceSol: 0,
    newCounterpartiesLastHour: 0,
    secondsSincePreviousSend: null,
  }).includes("large_outflow");

/** Ten sends, the last of `last` SOL, laid out in time and in batches as the case says. */
const layouts: Array<{ name: string; batches: (last: number) => Send[][] }> = [
  {
    name: "one batch within the hour (the current hour's sum)",
    batches: (last) => [[...NINE_OF_10_1, last].map((amount, k) => ({ amount, blockTime: T0 + k * 60 }))],
  },
  {
    name: "a batch an hour (finished hours summed back from their buckets)",
    batches: (last) => [...NINE_OF_10_1, last].map((amount, k) => [{ amount, blockTime: T0 + k * HOUR }]),
  },
  {
    name: "a new address's first batch spanning ten hours",
    batches: (last) => [[...NINE_OF_10_1, last].map((amount, k) => ({ amount, blockTime: T0 + k * HOUR }))],
  },
  {
    name: "the newest send first, then late sends in earlier hours",
    batches: (last) => [
      [{ amount: last, blockTime: T0 + 10 * HOUR }],
      ...NINE_OF_10_1.map((amount, k) => [{ amount, blockTime: T0 + k * HOUR }]),
    ],
  },
  {
    name: "one transaction of ten legs",
    batches: (last) => [[...NINE_OF_10_1, last].map((amount) => ({ amount, blockTime: T0 }))],
  },
];

describe("large_outflow through the activity counters", () => {
  describe.each(layouts)("ten sends: $name", ({ batches }) => {
    it("sums nine of 10.1 SOL and one of 9.1 to exactly 100 SOL, which reaches the cut-off", async () => {
      const outflow = await outflowAfter(batches(9.1));
      expect(outflow).toBe(100);
      expect(largeOutflow(outflow)).toBe(true);
    });

    it("does not reach it one lamport below 100 SOL", async () => {
      const outflow = await outflowAfter(batches(9.1 - ONE_LAMPORT));
      expect(outflow).toBe(99.999999999);
      expect(largeOutflow(outflow)).toBe(false);
    });

    it("reaches it one lamport above 100 SOL", async () => {
      const outflow = await outflowAfter(batches(9.1 + ONE_LAMPORT));
      expect(outflow).toBe(100.000000001);
      expect(largeOutflow(outflow)).toBe(true);
    });
  });

  it("reads an hour bucket that an earlier version summed in doubles to the lamport", async () => {
    // Before sums were made to the lamport, a finished hour could hold 99.99999999999999 for
    // sends totalling 100 SOL (HINCRBYFLOAT of drifted sums): a running deployment keeps those.
    const wallet = randomAddress();
    await countBatch(wallet, [{ amount: 0, blockTime: T0 }]);
    const hour = Math.floor(T0 / HOUR);
    await redis.hset(`${prefix}:activity-h:${wallet}`, `o${hour - 1}`, "99.99999999999999");
    // The next hour's batch recomputes the 24-hour sum from the buckets.
    expect(await countBatch(wallet, [{ amount: 0, blockTime: T0 + HOUR }])).toBe(100);
  });
});
