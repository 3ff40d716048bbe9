// The activity counters' Lua script against real Redis, checked against a plain recount of
// every event (the definition the running sums must agree with).
import { Redis } from "ioredis";
import { pack, unpack } from "msgpackr";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { applyActivityInOrder, applyBatchActivity, forgetAddressActivity, type ActivityEvent, type AddressEvents } from "../../src/pipeline/activity.ts";
import { randomAddress } from "../helpers/chain.ts";
import { freePort } from "../helpers/ports.ts";
import { uniqueQueuePrefix } from "../helpers/db.ts";
import { TEST_REDIS_URL } from "../helpers/env.ts";

let redis: Redis;
const prefix = uniqueQueuePrefix("pipeline-activity");

beforeAll(() => {
  redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 1 });
});
afterAll(async () => {
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length > 0) await redis.del(...keys);
  redis.disconnect();
});

const minute = (t: number) => Math.floor(t / 60);
const hour = (t: number) => Math.floor(t / 3600);

type Event = Omit<ActivityEvent, "batchId">;

/** What the script must report after `batches` (every batch so far, in arrival order) for the last one. */
function recount(batches: readonly Event[][]) {
  const all = batches.flat();
  const batchSize = batches.at(-1)!.length;
  const last = Math.max(...all.map((e) => e.blockTime));
  const M = minute(last);
  const H = hour(last);
  const inHours = (e: Event, from: number, to: number) => hour(e.blockTime) >= from && hour(e.blockTime) <= to;
  // A counterparty sent to that was never dealt with before, either way (in an earlier batch, or
  // earlier in its own), is new; it counts at the minute of the transaction that first sent to
  // it, however its batch is cut.
  const remembered = new Set<string>();
  const newAt: number[] = [];
  for (const batch of batches) {
    for (const e of batch) {
      for (const counterparty of e.sentTo) {
        if (!remembered.has(counterparty.slice(0, 12))) newAt.push(e.blockTime);
        remembered.add(counterparty.slice(0, 12));
      }
      for (const counterparty of e.receivedFrom) remembered.add(counterparty.slice(0, 12));
    }
  }
  const start = all.length - batchSize;
  // The trailing hour at the newest minute before the last batch, without its events.
  const earlier = all.slice(0, start);
  const Mb = earlier.length > 0 ? minute(Math.max(...earlier.map((e) => e.blockTime))) : 0;
  const Hb = Math.floor(Mb / 60);
  return {
    transactionsLastHour: all.filter((e) => minute(e.blockTime) >= M - 59).length,
    transactionsLastHourBefore: earlier.filter((e) => minute(e.blockTime) >= Mb - 59).length,
    // The baseline that trailing hour was judged by: the 168 hours before the hour preceding its own.
    previous7DaysBefore: earlier.length > 0 ? earlier.filter((e) => inHours(e, Hb - 169, Hb - 2)).length : null,
    previous7DaysCount: all.filter((e) => inHours(e, H - 169, H - 2)).length,
    transactions24h: all.filter((e) => inHours(e, H - 23, H)).length,
    failed24h: all.filter((e) => e.failedSent && inHours(e, H - 23, H)).length,
    // Summed in whole lamports, exactly: the counters must reach the exact total, not one that
    // drifted a few billionths of a lamport off it (large_outflow's cut-off is exact).
    solOutflow24h: Number(all.filter((e) => inHours(e, H - 23, H)).reduce((sum, e) => sum + BigInt(Math.round(e.solSent * 1e9)), 0n)) / 1e9,
    newCounterpartiesLastHour: newAt.filter((t) => minute(t) >= M - 59).length,
    countAfter: all.slice(start).map((e, i) => {
      const m = minute(e.blockTime);
      return all.slice(0, start + i + 1).filter((x) => minute(x.blockTime) >= m - 59 && minute(x.blockTime) <= m).length;
    }),
    // Each event's baseline from its own hour: the 168 hours before the hour preceding it.
    previous7DaysAt: all.slice(start).map((e) => all.filter((x) => inHours(x, hour(e.blockTime) - 169, hour(e.blockTime) - 2)).length),
  };
}

function randomBatch(from: number, spread: number, size: number, counterparties: string[]): Event[] {
  const times = Array.from({ length: size }, () => from + Math.floor(Math.random() * spread)).sort((a, b) => a - b);
  return times.map((blockTime) => {
    // One to three other sides (a transaction whose legs reach several), or none (a self-transfer),
    // each sent to or received from.
    const others =
      Math.random() < 0.1
        ? []
        : [...new Set(Array.from({ length: 1 + Math.floor(Math.random() * 3) }, () => counterparties[Math.floor(Math.random() * counterparties.length)]!))];
    const sent = others.map(() => Math.random() < 0.5);
    // Its own transaction when it sent to any of them, and now and then a self-transfer.
    const own = sent.includes(true) || (others.length === 0 && Math.random() < 0.5);
    return {
      blockTime,
      sent: own,
      failedSent: own && Math.random() < 0.3,
      // Up to 100 SOL in whole lamports, as stored amounts are.
      solSent: Math.random() < 0.3 ? Math.round(Math.random() * 100e9) / 1e9 : 0,
      sentTo: others.filter((_, i) => sent[i]),
      receivedFrom: others.filter((_, i) => !sent[i]),
    };
  });
}

let batchCounter = 0;
type Input = Omit<AddressEvents, "events"> & { events: Event[] };
const inBatch = (batchId: string, inputs: readonly Input[]): AddressEvents[] =>
  inputs.map((input) => ({ ...input, events: input.events.map((e) => ({ ...e, batchId })) }));
/** Applies the inputs as one new batch. */
const run = (inputs: Input[]) => applyBatchActivity(redis, prefix, inBatch(`bat_test${batchCounter++}`, inputs));

describe("activity counters", () => {
  // Each case: a sequence of batches as (seconds after the previous batch's start, spread, size).
  const cases: Array<{ name: string; steps: Array<[number, number, number]> }> = [
    { name: "a burst within one minute", steps: [[0, 30, 5], [10, 20, 7], [5, 10, 3]] },
    { name: "batches minutes apart, across the hour's window edge", steps: [[0, 600, 20], [1800, 900, 15], [1500, 120, 10], [3700, 60, 4]] },
    { name: "days of activity (the 7-day baseline and the 24-hour sums)", steps: [[0, 7200, 30], [86_400, 7200, 25], [3 * 86_400, 3600, 20], [4 * 86_400, 600, 10], [3600, 300, 5]] },
    { name: "a batch spanning more than an hour", steps: [[0, 300, 10], [200, 2 * 3600, 40], [60, 60, 3]] },
    { name: "a gap longer than the 7-day baseline", steps: [[0, 3600, 12], [9 * 86_400, 120, 6], [30, 30, 2]] },
  ];

  for (const { name, steps } of cases) {
    it(`matches a full recount: ${name}`, async () => {
      const address = randomAddress();
      const counterparties = Array.from({ length: 15 }, randomAddress);
      const batches: Event[][] = [];
      let start = 1_717_000_000;
      for (const [after, spread, size] of steps) {
        start += after;
        const events = randomBatch(Math.max(start, batches.at(-1)?.at(-1)?.blockTime ?? 0), spread, size, counterparties);
        batches.push(events);
        const result = (await run([{ address, needWindows: true, events }])).get(address)!;
        const expected = recount(batches);
        expect(result).toMatchObject(expected);
      }
    });
  }

  for (const { name, steps } of cases) {
    it(`answers each batch of a group applied in one call as if it were applied alone: ${name}`, async () => {
      const [together, alone, onlySome] = [randomAddress(), randomAddress(), randomAddress()];
      const counterparties = Array.from({ length: 15 }, randomAddress);
      const batches: Event[][] = [];
      let start = 1_717_000_000;
      for (const [after, spread, size] of steps) {
        start += after;
        batches.push(randomBatch(Math.max(start, batches.at(-1)?.at(-1)?.blockTime ?? 0), spread, size, counterparties));
      }
      const batchIds = batches.map(() => `bat_steps${batchCounter++}`);
      // A third address is in every other batch only: steps an address is not in are skipped.
      const group = batches.map((events, k) =>
        inBatch(batchIds[k]!, [
          { address: together, needWindows: true, events },
          ...(k % 2 === 0 ? [{ address: onlySome, needWindows: false, events }] : []),
        ]),
      );
      const answers = await applyActivityInOrder(redis, prefix, group);

      for (const [k, events] of batches.entries()) {
        const separate = (await applyBatchActivity(redis, prefix, inBatch(`bat_alone${batchCounter++}`, [{ address: alone, needWindows: true, events }]))).get(alone)!;
        const answer = answers[k]!.get(together)!;
        expect(answer).toEqual(separate);
        const expected = recount(batches.slice(0, k + 1));
        expect(answer).toMatchObject(expected);
        expect(answers[k]!.has(onlySome)).toBe(k % 2 === 0);
      }
    });
  }

  it("counts a transaction that arrives up to an hour late against its own trailing 60 minutes", async () => {
    // A source catching up after an outage (Helius retries) delivers older transactions after newer ones.
    const address = randomAddress();
    const t0 = 1_717_000_800;
    const event = (blockTime: number): Event => ({ blockTime, sent: true, failedSent: false, solSent: 0, sentTo: [], receivedFrom: [] });
    const batches: Event[][] = [];
    const late = [
      [t0, t0 + 60, t0 + 120, t0 + 180], // four in the first minutes
      [t0 + 62 * 60], // the newest, an hour on
      [t0 + 30 * 60], // 32 minutes late: its hour holds the first four
      [t0 + 3 * 60 + 30], // 59 minutes late, at the oldest minute whose hour is still kept whole
    ];
    for (const times of late) {
      batches.push(times.map(event));
      const result = (await run([{ address, needWindows: true, events: batches.at(-1)! }])).get(address)!;
      expect(result).toMatchObject(recount(batches));
    }
    expect(recount(batches).countAfter).toEqual([5]);
  });

  it("counts a transaction 59 minutes 50 seconds late against its whole trailing hour, 60 minute buckets back", async () => {
    // Under an hour late by the clock, yet 60 minute buckets behind the newest: its trailing
    // hour starts 119 buckets before the newest one's.
    const address = randomAddress();
    const t0 = 1_717_000_800; // the start of a minute
    const event = (blockTime: number): Event => ({ blockTime, sent: true, failedSent: false, solSent: 0, sentTo: [], receivedFrom: [] });
    const batches: Event[][] = [];
    for (const times of [[t0 + 50, t0 + 110], [t0 + 119 * 60 + 10], [t0 + 59 * 60 + 20]]) {
      batches.push(times.map(event));
      const result = (await run([{ address, needWindows: true, events: batches.at(-1)! }])).get(address)!;
      expect(result).toMatchObject(recount(batches));
    }
    expect(batches[2]![0]!.blockTime).toBeGreaterThan(batches[1]![0]!.blockTime - 3600);
    expect(recount(batches).countAfter).toEqual([3]);
  });

  it("measures each event's baseline from its own hour, not from the newest event of its batch", async () => {
    // A burst, then in the same batch a transaction three hours on: the burst's hour falls inside
    // the newest one's 7 days, so measured from there the burst would raise its own baseline.
    const address = randomAddress();
    const t0 = 1_717_200_000 - (1_717_200_000 % 3600);
    const event = (blockTime: number): Event => ({ blockTime, sent: true, failedSent: false, solSent: 0, sentTo: [], receivedFrom: [] });
    const batch = [...Array.from({ length: 400 }, (_, i) => event(t0 + 60 + Math.floor(i / 10))), event(t0 + 3 * 3600 + 60)];
    const result = (await run([{ address, needWindows: true, events: batch }])).get(address)!;
    expect(result).toMatchObject(recount([batch]));
    expect(result.previous7DaysCount).toBe(400);
    expect(new Set(result.previous7DaysAt!.slice(0, 400))).toEqual(new Set([0]));
  });

  it("counts a batch once when it is applied again (a re-run after a crash) and answers the same", async () => {
    const address = randomAddress();
    const events = randomBatch(1_717_000_000, 120, 8, [randomAddress(), randomAddress()]);
    const batchId = `bat_rerun${batchCounter++}`;
    const first = await applyBatchActivity(redis, prefix, inBatch(batchId, [{ address, needWindows: true, events }]));
    const again = await applyBatchActivity(redis, prefix, inBatch(batchId, [{ address, needWindows: true, events }]));
    expect(again.get(address)).toEqual(first.get(address));
    expect(first.get(address)!.transactionsLastHour).toBe(8);
  });

  it("counts each batch once when a re-run groups it with other batches and packs the calls differently", async () => {
    // 2,500 addresses need two script calls; adding 600 more addresses moves where the calls split.
    const t = 1_717_200_000;
    const first = Array.from({ length: 2_500 }, () => randomAddress());
    const more = Array.from({ length: 600 }, () => randomAddress());
    const one = (blockTime: number): Event => ({ blockTime, sent: true, failedSent: false, solSent: 0, sentTo: [], receivedFrom: [] });
    const [x, y] = [`bat_group_x${batchCounter++}`, `bat_group_y${batchCounter++}`];
    await applyBatchActivity(redis, prefix, inBatch(x, first.map((address) => ({ address, needWindows: false, events: [one(t)] }))));
    // The group: batch x again (already counted) and batch y, with one more event on the first addresses.
    const group: AddressEvents[] = [
      ...first.map((address) => ({
        address,
        needWindows: true,
        events: [{ ...one(t), batchId: x }, { ...one(t + 30), batchId: y }],
      })),
      ...more.map((address) => ({ address, needWindows: true, events: [{ ...one(t + 30), batchId: y }] })),
    ];
    const result = await applyBatchActivity(redis, prefix, group);
    expect(new Set(first.map((a) => result.get(a)!.transactionsLastHour))).toEqual(new Set([2]));
    expect(new Set(first.map((a) => result.get(a)!.countAfter!.join()))).toEqual(new Set(["1,2"]));
    expect(new Set(more.map((a) => result.get(a)!.transactionsLastHour))).toEqual(new Set([1]));
    // And once more, in the other grouping: nothing is added.
    const again = await applyBatchActivity(redis, prefix, group.slice(0, 100));
    expect(new Set(first.slice(0, 100).map((a) => again.get(a)!.transactionsLastHour))).toEqual(new Set([2]));
  });

  it("answers every address of an evaluation that takes more than two script calls", async () => {
    // 7,000 addresses: four calls, two in flight at a time; each address has its own count.
    const t = 1_717_300_000;
    const addresses = Array.from({ length: 7_000 }, () => randomAddress());
    const events = (n: number): Event[] =>
      Array.from({ length: n }, (_, k) => ({ blockTime: t + k, sent: true, failedSent: false, solSent: 0, sentTo: [], receivedFrom: [] }));
    const result = await run(addresses.map((address, i) => ({ address, needWindows: false, events: events((i % 5) + 1) })));
    expect(result.size).toBe(addresses.length);
    expect(addresses.filter((address, i) => result.get(address)?.transactionsLastHour !== (i % 5) + 1)).toEqual([]);
  });

  it("fails once, leaving no call's failure unhandled, when Redis cannot be reached mid-evaluation", async () => {
    // Nothing listens on this port; without an offline queue every call fails at once, so
    // the second call in flight fails while the first one's failure is being reported.
    const unreachable = new Redis({ port: await freePort(), lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0 });
    unreachable.on("error", () => {}); // the refused connection itself is expected
    const addresses = Array.from({ length: 7_000 }, () => randomAddress());
    const events: Event[] = [{ blockTime: 1_717_400_000, sent: true, failedSent: false, solSent: 0, sentTo: [], receivedFrom: [] }];
    await expect(
      applyBatchActivity(unreachable, prefix, inBatch(`bat_down${batchCounter++}`, addresses.map((address) => ({ address, needWindows: false, events })))),
    ).rejects.toThrow();
    // An unhandled rejection would be reported by the test runner after this test's end.
    await new Promise((resolve) => setTimeout(resolve, 50));
    unreachable.disconnect();
  });

  it("keeps separate counts per address and sets an expiry on every key", async () => {
    const [a, b] = [randomAddress(), randomAddress()];
    const t = 1_717_100_000;
    const result = await run([
      { address: a, needWindows: false, events: randomBatch(t, 60, 3, [b]) },
      { address: b, needWindows: false, events: randomBatch(t, 60, 6, [a]) },
    ]);
    expect(result.get(a)!.transactionsLastHour).toBe(3);
    expect(result.get(b)!.transactionsLastHour).toBe(6);
    expect(result.get(a)!.countAfter).toBeNull();
    for (const address of [a, b]) {
      const keys = await redis.keys(`${prefix}:activity*:${address}`);
      expect(keys.length).toBeGreaterThanOrEqual(2);
      for (const key of keys) expect(await redis.ttl(key)).toBeGreaterThan(7 * 86_400);
    }
  });

  it("loads its script into a Redis that has none cached (new, restarted or flushed)", async () => {
    const address = randomAddress();
    await redis.script("FLUSH");
    const result = await run([{ address, needWindows: true, events: randomBatch(1_717_300_000, 60, 4, [randomAddress()]) }]);
    expect(result.get(address)).toMatchObject({ transactionsLastHour: 4, countAfter: [1, 2, 3, 4] });
  });

  it("keeps the state's expiry on later writes of the same hour and renews it in a new hour", async () => {
    const address = randomAddress();
    const stateKey = `${prefix}:activity:${address}`;
    const t = 1_717_200_000 - (1_717_200_000 % 3600);
    const once = (blockTime: number) => run([{ address, needWindows: false, events: [{ blockTime, sent: true, failedSent: false, solSent: 0, sentTo: [], receivedFrom: [] }] }]);
    await once(t + 10);
    expect(await redis.ttl(stateKey)).toBeGreaterThan(7 * 86_400);
    // Shortened by hand: a write in the same hour keeps it (KEEPTTL), it does not clear it.
    await redis.expire(stateKey, 1_000);
    await once(t + 20);
    const kept = await redis.ttl(stateKey);
    expect(kept).toBeGreaterThan(0);
    expect(kept).toBeLessThanOrEqual(1_000);
    // The first write of a new hour sets the full expiry again.
    await once(t + 3600 + 5);
    expect(await redis.ttl(stateKey)).toBeGreaterThan(7 * 86_400);
  });

  it("reports a dormant address's gap for a day after it wakes, then forgets it", async () => {
    const address = randomAddress();
    const event = (blockTime: number): Event => ({ blockTime, sent: true, failedSent: false, solSent: 0, sentTo: [], receivedFrom: [] });
    const t0 = 1_700_000_000;
    const wake = t0 + 100 * 86_400;
    const gap = async (blockTime: number) =>
      (await run([{ address, needWindows: false, events: [event(blockTime)] }])).get(address)!.dormantGapSeconds;
    expect(await gap(t0)).toBeNull();
    expect(await gap(wake)).toBe(100 * 86_400);
    expect(await gap(wake + 3600)).toBe(100 * 86_400);
    expect(await gap(wake + 2 * 86_400)).toBe(2 * 86_400 - 3600);
  });

  it("measures a wake-up's silence from the newest block time kept after the other keys expired (8 days)", async () => {
    const address = randomAddress();
    const event = (blockTime: number): Event => ({ blockTime, sent: true, failedSent: false, solSent: 0, sentTo: [], receivedFrom: [] });
    const t0 = 1_700_000_000;
    await run([{ address, needWindows: false, events: [event(t0)] }]);
    await run([{ address, needWindows: false, events: [event(t0 + 600)] }]);
    // What Redis does to them 8 days later (every key but the newest block time's).
    expect(await redis.ttl(`${prefix}:activity-last:${address}`)).toBeGreaterThan(1_000 * 86_400);
    await redis.del(`${prefix}:activity:${address}`, `${prefix}:activity-h:${address}`, `${prefix}:activity-cp:${address}`);
    const wake = t0 + 600 + 100 * 86_400;
    const answer = await run([{ address, needWindows: false, events: [event(wake)] }]);
    expect(answer.get(address)!.dormantGapSeconds).toBe(100 * 86_400);
  });

  it("forgets the newest block time with the rest when the address's counters are dropped (tracked anew)", async () => {
    const address = randomAddress();
    const event = (blockTime: number): Event => ({ blockTime, sent: true, failedSent: false, solSent: 0, sentTo: [], receivedFrom: [] });
    await run([{ address, needWindows: false, events: [event(1_700_000_000)] }]);
    await forgetAddressActivity(redis, prefix, address);
    expect(await redis.exists(`${prefix}:activity-last:${address}`)).toBe(0);
    const answer = await run([{ address, needWindows: false, events: [event(1_700_000_000 + 100 * 86_400)] }]);
    expect(answer.get(address)!.dormantGapSeconds).toBeNull();
  });

  it("finds a dormancy gap between two transactions of one batch (a backfill spanning the silence)", async () => {
    const event = (blockTime: number): Event => ({ blockTime, sent: true, failedSent: false, solSent: 0, sentTo: [], receivedFrom: [] });
    const t0 = 1_700_000_000;
    const wake = t0 + 100 * 86_400;
    // The silence inside the address's first batch.
    const first = randomAddress();
    const batch = [event(t0), event(t0 + 60), event(wake), event(wake + 30)];
    expect((await run([{ address: first, needWindows: false, events: batch }])).get(first)!.dormantGapSeconds).toBe(100 * 86_400 - 60);
    // The silence inside a later batch, after a short gap before its first transaction.
    const later = randomAddress();
    await run([{ address: later, needWindows: false, events: [event(t0)] }]);
    const answer = await run([{ address: later, needWindows: false, events: [event(t0 + 3600), event(wake)] }]);
    expect(answer.get(later)!.dormantGapSeconds).toBe(100 * 86_400 - 3600);
  });
});

describe("new counterparties (new_counterparty_burst)", () => {
  const at = (blockTime: number, sides: Partial<Pick<Event, "sentTo" | "receivedFrom">>): Event => ({
    blockTime,
    sent: (sides.sentTo?.length ?? 0) > 0,
    failedSent: false,
    solSent: 0,
    sentTo: [],
    receivedFrom: [],
    ...sides,
  });
  const newOf = async (address: string, events: Event[]) => (await run([{ address, needWindows: false, events }])).get(address)!.newCounterpartiesLastHour;
  const t0 = 1_717_300_020;

  it("counts none for transfers received from fresh addresses, and each fresh address sent to", async () => {
    const address = randomAddress();
    // Address-poisoning dust: ten fresh senders within ten minutes.
    expect(await newOf(address, Array.from({ length: 10 }, (_, k) => at(t0 + k * 60, { receivedFrom: [randomAddress()] })))).toBe(0);
    expect(await newOf(address, Array.from({ length: 10 }, (_, k) => at(t0 + 600 + k, { sentTo: [randomAddress()] })))).toBe(10);
  });

  it("does not count an address it received from in an earlier batch when it sends to it", async () => {
    const address = randomAddress();
    const [payer, other, fresh] = [randomAddress(), randomAddress(), randomAddress()];
    expect(await newOf(address, [at(t0, { receivedFrom: [payer, other] })])).toBe(0);
    expect(await newOf(address, [at(t0 + 60, { sentTo: [payer] }), at(t0 + 61, { sentTo: [other, fresh] })])).toBe(1);
  });

  it("goes by chain order within a batch: received from, then sent to is not new; sent to, then received from is", async () => {
    const address = randomAddress();
    const [paidBack, paidFirst] = [randomAddress(), randomAddress()];
    const batch = [
      at(t0, { receivedFrom: [paidBack] }),
      at(t0 + 1, { sentTo: [paidBack, paidFirst] }),
      at(t0 + 2, { receivedFrom: [paidFirst] }),
    ];
    expect(await newOf(address, batch)).toBe(1);
    // Neither is new again: the hour's count stays at the one.
    expect(await newOf(address, [at(t0 + 3, { sentTo: [paidBack, paidFirst] })])).toBe(1);
  });

  it("counts each new counterparty at its own transaction's minute: twelve sends an hour apart in one batch are one in the last hour", async () => {
    // A backfill: the same history batch by batch showed one new counterparty in the hour, and
    // in one batch all twelve (counted at its newest minute), a burst.
    const [together, oneByOne] = [randomAddress(), randomAddress()];
    const sends = Array.from({ length: 12 }, (_, k) => at(t0 + k * 3600, { sentTo: [randomAddress()] }));
    expect(await newOf(together, sends)).toBe(1);
    const batchByBatch = [];
    for (const send of sends) batchByBatch.push(await newOf(oneByOne, [send]));
    expect(batchByBatch).toEqual(Array.from({ length: 12 }, () => 1));
    expect(recount([sends]).newCounterpartiesLastHour).toBe(1);
  });

  it("answers a week's backfill in one batch as batch by batch and as the recount", async () => {
    // Two sends an hour to fresh addresses for seven days (the reviewer's backfill scored 15).
    const [together, oneByOne] = [randomAddress(), randomAddress()];
    const sends = Array.from({ length: 7 * 24 * 2 }, (_, k) => at(t0 + k * 1800, { sentTo: [randomAddress()] }));
    const whole = (await run([{ address: together, needWindows: true, events: sends }])).get(together)!;
    let last;
    for (const send of sends) last = (await run([{ address: oneByOne, needWindows: true, events: [send] }])).get(oneByOne)!;
    expect(whole.newCounterpartiesLastHour).toBe(2);
    expect(last!.newCounterpartiesLastHour).toBe(2);
    expect(whole).toMatchObject(recount([sends]));
  });

  it("keeps each new counterparty's own minute for later batches: the hour's window moves past the early ones", async () => {
    const address = randomAddress();
    // Ten fresh payees five minutes apart (minutes 0–45): all ten in the hour.
    expect(await newOf(address, Array.from({ length: 10 }, (_, k) => at(t0 + k * 300, { sentTo: [randomAddress()] })))).toBe(10);
    // At minute 70 the hour starts at minute 11: the payees of minutes 0, 5 and 10 are out of it.
    expect(await newOf(address, [at(t0 + 70 * 60, { receivedFrom: [randomAddress()] })])).toBe(7);
  });

  it("counts a late new counterparty at its own minute: inside the newest hour it counts, before it not", async () => {
    const address = randomAddress();
    // The newest minute is 200; a late batch sends to one fresh address at minute 100 and one at 185.
    expect(await newOf(address, [at(t0 + 200 * 60, { sentTo: [randomAddress()] })])).toBe(1);
    const late = [at(t0 + 100 * 60, { sentTo: [randomAddress()] }), at(t0 + 185 * 60, { sentTo: [randomAddress()] })];
    expect(await newOf(address, late)).toBe(2);
    // The one at minute 100 is remembered all the same: sending to it again is not new.
    expect(await newOf(address, [at(t0 + 201 * 60, { sentTo: late[0]!.sentTo })])).toBe(2);
  });

  it("reads the new counterparties of a state the previous version wrote (counted at its batch's newest minute)", async () => {
    // A deploy must not reset live counters: the (minute, count, new) triples keep their meaning.
    const address = randomAddress();
    const last = t0 + 125;
    const M = minute(last);
    // sm s sn last gt gs ch c7 c23 f23 o23 cH fH oH flags ls, then (minute, count, new) triples.
    const written = [M, 3, 9, last, -1, -1, hour(last), 0, 0, 0, 0, 3, 0, 0, 7, last, M - 2, 1, 0, M - 1, 1, 0, M, 1, 9];
    await redis.set(`${prefix}:activity:${address}`, pack(written), "EX", 600);
    expect(await newOf(address, [at(last + 30, { sentTo: [randomAddress()] })])).toBe(10);
  });

  it("answers a re-run of a batch with what it counted, though it sends to an address received from since", async () => {
    const address = randomAddress();
    const [x, y] = [randomAddress(), randomAddress()];
    const first = inBatch(`bat_rerun${batchCounter++}`, [{ address, needWindows: false, events: [at(t0, { sentTo: [x] })] }]);
    expect((await applyBatchActivity(redis, prefix, first)).get(address)!.newCounterpartiesLastHour).toBe(1);
    await run([{ address, needWindows: false, events: [at(t0 + 5, { receivedFrom: [y] })] }]);
    // The re-run's events are counted already: nothing is added, the stored answer comes back.
    expect((await applyBatchActivity(redis, prefix, first)).get(address)!.newCounterpartiesLastHour).toBe(1);
    // Both are remembered (y from the transfer it received): the hour's count stays at x alone.
    expect(await newOf(address, [at(t0 + 10, { sentTo: [x, y] })])).toBe(1);
  });
});

describe("the trailing hour at the newest minute before each batch (unusual_activity out of order)", () => {
  const t0 = 1_717_502_400; // 12:00, the start of a minute
  const at = (minuteOf: number): Event => ({ blockTime: t0 + minuteOf * 60 + 5, sent: true, failedSent: false, solSent: 0, sentTo: [], receivedFrom: [] });

  it("answers the count before and after a late batch at the newest minute, where the late transaction's own window misses the newer one", async () => {
    // The reviewer's sequence: 12:00–12:02, then 12:04, then 12:03 late, then 12:05–12:07.
    const address = randomAddress();
    const deliveries = [[0, 1, 2], [4], [3], [5, 6, 7]];
    const answers = [];
    for (const minutes of deliveries) answers.push((await run([{ address, needWindows: true, events: minutes.map(at) }])).get(address)!);
    expect(answers.map((a) => [a.transactionsLastHourBefore, a.transactionsLastHour, a.countAfter])).toEqual([
      [0, 3, [1, 2, 3]],
      [3, 4, [4]],
      // At its own minute the late one counts 4 (12:04 is after it); at the newest minute, 4 → 5.
      [4, 5, [4]],
      [5, 8, [6, 7, 8]],
    ]);
  });

  it("answers a re-run of a late batch with the counts it first answered, though later batches are counted since", async () => {
    const address = randomAddress();
    await run([{ address, needWindows: true, events: [0, 1, 2, 4].map(at) }]);
    const late = inBatch(`bat_late${batchCounter++}`, [{ address, needWindows: true, events: [at(3)] }]);
    const first = (await applyBatchActivity(redis, prefix, late)).get(address)!;
    await run([{ address, needWindows: true, events: [5, 6, 7].map(at) }]);
    const again = (await applyBatchActivity(redis, prefix, late)).get(address)!;
    expect(again).toEqual(first);
    expect([again.transactionsLastHourBefore, again.transactionsLastHour]).toEqual([4, 5]);
  });

  it("answers the baseline of the newest minute's own hour before each batch, which falls at the hour boundary", async () => {
    // Five transactions 169 hours before hour h: in h's baseline, not in h+1's. Then 12:59 and 13:00 (h = 12:00).
    const address = randomAddress();
    const old = [0, 1, 2, 3, 4].map((m) => at(m - 169 * 60));
    await run([{ address, needWindows: true, events: old }]);
    const atBoundary = [];
    for (const minutes of [[59], [60]]) atBoundary.push((await run([{ address, needWindows: true, events: minutes.map(at) }])).get(address)!);
    expect(atBoundary.map((a) => [a.previous7DaysBefore, a.previous7DaysAt, a.previous7DaysCount])).toEqual([
      // Before 12:59, the newest minute was in hour h−169, whose 7 days before held nothing.
      [0, [5], 5],
      // Before 13:00, the newest minute was 12:59: its hour's baseline held the five; 13:00's does not.
      [5, [0], 0],
    ]);
  });

  it("reads the newest minute's baseline as not known in an answer stored by an older version", async () => {
    const address = randomAddress();
    await run([{ address, needWindows: true, events: [0, 1].map(at) }]);
    const batchId = `bat_legacy${batchCounter++}`;
    const first = (await applyBatchActivity(redis, prefix, inBatch(batchId, [{ address, needWindows: true, events: [at(2)] }]))).get(address)!;
    expect(first.previous7DaysBefore).toBe(0);
    // The answer as an older version stored it: its last number, the baseline, left off.
    const key = `${prefix}:activity-answers:${batchId}`;
    const [bucket] = Object.keys(await redis.hgetall(key));
    const stored = unpack((await redis.hgetBuffer(key, bucket!))!) as Record<string, number[]>;
    await redis.hset(key, bucket!, pack({ [address]: stored[address]!.slice(0, -1) }));
    const again = (await applyBatchActivity(redis, prefix, inBatch(batchId, [{ address, needWindows: true, events: [at(2)] }]))).get(address)!;
    expect(again).toEqual({ ...first, previous7DaysBefore: null });
  });

  it("answers no count before when no unusual_activity alert needs the windows", async () => {
    const address = randomAddress();
    const answer = (await run([{ address, needWindows: false, events: [at(0)] }])).get(address)!;
    expect(answer.transactionsLastHourBefore).toBeNull();
  });
});

describe("dormancy: only the address's own sends end a silence", () => {
  const t0 = 1_700_000_000;
  const DAY = 86_400;
  const send = (blockTime: number, failed = false): Event => ({ blockTime, sent: true, failedSent: failed, solSent: 0, sentTo: [], receivedFrom: [] });
  const receipt = (blockTime: number): Event => ({ blockTime, sent: false, failedSent: false, solSent: 0, sentTo: [], receivedFrom: [randomAddress()] });
  const gapAfter = async (address: string, events: Event[]) =>
    (await run([{ address, needWindows: false, events }])).get(address)!.dormantGapSeconds;

  it("reports no gap for a dust transfer received by a wallet silent for 100 days", async () => {
    const address = randomAddress();
    await gapAfter(address, [send(t0)]);
    expect(await gapAfter(address, [receipt(t0 + 100 * DAY)])).toBeNull();
  });

  it("measures a wake-up's silence from the newest send, deposits received meanwhile not ending it", async () => {
    const address = randomAddress();
    await gapAfter(address, [send(t0)]);
    // A deposit every week: the wallet never sent.
    for (let week = 1; week <= 13; week++) expect(await gapAfter(address, [receipt(t0 + week * 7 * DAY)])).toBeNull();
    expect(await gapAfter(address, [send(t0 + 95 * DAY)])).toBe(95 * DAY);
  });

  it("counts a failed send as a wake-up, and a send after a received transfer in the same batch from the send before", async () => {
    const failing = randomAddress();
    await gapAfter(failing, [send(t0)]);
    expect(await gapAfter(failing, [send(t0 + 91 * DAY, true)])).toBe(91 * DAY);
    const mixed = randomAddress();
    await gapAfter(mixed, [send(t0)]);
    expect(await gapAfter(mixed, [receipt(t0 + 90 * DAY), send(t0 + 92 * DAY)])).toBe(92 * DAY);
  });

  it("does not count the first send as a wake-up however long the address only received before it", async () => {
    const address = randomAddress();
    await gapAfter(address, [receipt(t0)]);
    expect(await gapAfter(address, [send(t0 + 100 * DAY)])).toBeNull();
  });

  it("keeps the newest send's block time, not the newest receipt's, once the other keys expired", async () => {
    const address = randomAddress();
    await gapAfter(address, [send(t0), receipt(t0 + 600)]);
    expect(await redis.get(`${prefix}:activity-last:${address}`)).toBe(String(t0));
    // A receipt after the state expired (8 days) builds a new state: it must still know the send.
    await redis.del(`${prefix}:activity:${address}`, `${prefix}:activity-h:${address}`);
    expect(await gapAfter(address, [receipt(t0 + 50 * DAY)])).toBeNull();
    expect(await redis.ttl(`${prefix}:activity-last:${address}`)).toBeGreaterThan(1_000 * DAY);
    await redis.del(`${prefix}:activity:${address}`, `${prefix}:activity-h:${address}`);
    expect(await gapAfter(address, [send(t0 + 100 * DAY)])).toBe(100 * DAY);
    expect(await redis.get(`${prefix}:activity-last:${address}`)).toBe(String(t0 + 100 * DAY));
  });

  it("gives the newest send's key its expiry when the address first sends in an hour it only received in before", async () => {
    const address = randomAddress();
    const hourStart = t0 - (t0 % 3600);
    await gapAfter(address, [receipt(hourStart + 10)]);
    await gapAfter(address, [send(hourStart + 20)]);
    expect(await redis.ttl(`${prefix}:activity-last:${address}`)).toBeGreaterThan(1_000 * DAY);
  });

  it("reads a hot state written before sends were kept (15 numbers) as having sent at its newest transaction", async () => {
    const address = randomAddress();
    const last = t0 + 125;
    const M = Math.floor(last / 60);
    // sm s sn last gt gs ch c7 c23 f23 o23 cH fH oH flags, then (minute, count, new) triples.
    const legacy = [M, 3, 0, last, -1, -1, Math.floor(last / 3600), 0, 0, 0, 0, 3, 0, 0, 7, M - 2, 1, 0, M - 1, 1, 0, M, 1, 0];
    await redis.set(`${prefix}:activity:${address}`, pack(legacy), "EX", 600);
    const answer = (await run([{ address, needWindows: true, events: [send(last + 30)] }])).get(address)!;
    // Its newest transaction stands in for the newest send: the gap is measured from there.
    expect(answer).toMatchObject({ transactionsLastHour: 4, transactionsLastHourBefore: 3, dormantGapSeconds: 30, countAfter: [4] });
    // The send since is the newest send now: a send 100 days on is a wake-up from there.
    await redis.del(`${prefix}:activity:${address}`, `${prefix}:activity-h:${address}`);
    expect(await gapAfter(address, [send(last + 30 + 100 * DAY)])).toBe(100 * DAY);
  });
});

describe("the counterparty set's lifetime (new_counterparty_burst)", () => {
  const DAY = 86_400;
  const hourStart = 1_717_603_200;
  const payment = (blockTime: number, to: string[]): Event => ({ blockTime, sent: true, failedSent: false, solSent: 0, sentTo: to, receivedFrom: [] });

  it("keeps the counterparties 100 days after the address's last activity, while its other keys live 8", async () => {
    const address = randomAddress();
    await run([{ address, needWindows: false, events: [payment(hourStart + 10, [randomAddress()])] }]);
    expect(await redis.ttl(`${prefix}:activity-cp:${address}`)).toBeGreaterThan(99 * DAY);
    expect(await redis.ttl(`${prefix}:activity:${address}`)).toBeLessThanOrEqual(8 * DAY);
    // Renewed to 100 days by the first batch of a new hour, not cut back to the others' 8.
    await redis.expire(`${prefix}:activity-cp:${address}`, 1_000);
    await run([{ address, needWindows: false, events: [payment(hourStart + 3600 + 10, [])] }]);
    expect(await redis.ttl(`${prefix}:activity-cp:${address}`)).toBeGreaterThan(99 * DAY);
  });

  it("trims the set back to 500 when a state made anew finds it past 1,000: a payout wallet active every ten days does not grow it without bound", async () => {
    const address = randomAddress();
    const payout = (blockTime: number) => run([{ address, needWindows: false, events: [payment(blockTime, Array.from({ length: 700 }, randomAddress))] }]);
    const expireAllButTheSet = async () => {
      for (const key of await redis.keys(`${prefix}:activity*:${address}`)) if (!key.includes(":activity-cp:")) await redis.del(key);
    };
    await payout(hourStart);
    expect(await redis.scard(`${prefix}:activity-cp:${address}`)).toBe(700);
    // Each state made anew counts its batch's payees first (all new), then trims the set.
    for (const day of [10, 20, 30]) {
      await expireAllButTheSet();
      await payout(hourStart + day * DAY);
      expect(await redis.scard(`${prefix}:activity-cp:${address}`), `day ${day}`).toBe(500);
    }
  });

  it("does not count the payees of a fortnightly payroll as new when it pays them again after the other keys expired", async () => {
    const address = randomAddress();
    const payees = Array.from({ length: 12 }, randomAddress);
    const newOf = async (blockTime: number) =>
      (await run([{ address, needWindows: false, events: [payment(blockTime, payees)] }])).get(address)!.newCounterpartiesLastHour;
    expect(await newOf(hourStart)).toBe(12);
    // Two weeks on: what Redis has done by then (every key of the address with less time to live is gone).
    for (const key of await redis.keys(`${prefix}:activity*:${address}`)) if ((await redis.ttl(key)) < 14 * DAY) await redis.del(key);
    expect(await redis.exists(`${prefix}:activity:${address}`)).toBe(0);
    expect(await newOf(hourStart + 14 * DAY)).toBe(0);
  });
});
