// An address that becomes tracked (by its first caller) gets its activity counters seeded from
// its stored history (src/pipeline/activity-seed.ts), end to end: history ingested and evaluated
// by the real pipeline while nobody tracked the address (HTTP ingest → Postgres → real workers),
// then POST /v1/wallets, then what the counters hold and what fires.
import { Writable } from "node:stream";
import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Transaction } from "../../src/domain/types.ts";
import { newId } from "../../src/ids.ts";
import { createLogger } from "../../src/logger.ts";
import { activityKeys, counterpartyKey } from "../../src/pipeline/activity.ts";
import { reseedActivity } from "../../src/pipeline/activity-reseed.ts";
import { trackWallet } from "../../src/pipeline/track-wallet.ts";
import { createCommandRedis, whenReady } from "../../src/redis.ts";
import { burstOfFive, busyWeek as busyWeekOf, countersOf, evaluatedBy, ingestInChainOrder } from "../helpers/activity-history.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { randomAddress } from "../helpers/chain.ts";
import { createAlert, eventsOf, track, tx } from "../helpers/pipeline.ts";
import { riskWatch } from "../helpers/risk-watch.ts";
import { bulkInfo, plainAnswer, startScriptedRedis } from "../helpers/scripted-redis.ts";
import { bearer, ingestTransactions } from "../helpers/seed.ts";

let t: TestApp;
let redis: Redis;
let prefix: string;
let alice: string;
let bob: string;
const HOUR = 3_600;
/** The bursts' hour: the last whole hour before now, so that nothing is ahead of the clock. */
const H0 = Math.floor(Date.now() / 1000 / HOUR) - 1;

beforeAll(async () => {
  t = await startTestApp("tracking-seeds-activity");
  redis = t.deps.redis;
  prefix = t.config.queuePrefix;
  [alice, bob] = await Promise.all([t.token("alice"), t.token("bob")]);
});
afterAll(async () => {
  await t.close();
});

const evaluated = (ingest: () => Promise<unknown>) => evaluatedBy(t, ingest);

const ingestInBatches = (txs: Transaction[], size: number) => ingestInChainOrder(t, alice, txs, size);

const busyWeek = (wallet: string) => busyWeekOf(wallet, H0);

/** Five sends in the first five minutes of the burst's hour. */
const burst = (wallet: string) => burstOfFive(wallet, H0);

/** 30 transfers received within a minute: high_velocity once counted (≥ 20 in the hour, ≥ 10 × the floor baseline of 1). */
const wave = (wallet: string): Transaction[] =>
  Array.from({ length: 30 }, (_, i) => tx({ from: randomAddress(), to: wallet, amount: 0.001, blockTime: H0 * HOUR + i }));

/** The address's batches, moved to `days` ago (ingested and evaluated then). */
async function ingestedDaysAgo(address: string, days: number): Promise<void> {
  await t.deps.sql`
    update ingest_batches set created_at = now() - make_interval(days => ${days}), evaluated_at = now() - make_interval(days => ${days})
    where id in (select batch_id from transactions where from_address = ${address} or to_address = ${address})`;
}

describe("an address that becomes tracked", () => {
  it("is judged on the week it was busy before its tracking: a burst that fires on a wallet without that history fires nothing, and the counters are a reseed's", async () => {
    const busy = randomAddress();
    const newcomer = randomAddress();
    await evaluated(() => ingestInBatches(busyWeek(busy), 112));
    // Nobody tracked it: nothing was counted.
    expect((await countersOf(t, busy)).hotState).toBeNull();

    const seeded = await track(t, alice, busy);
    const fresh = await track(t, alice, newcomer);
    const seededAlert = await createAlert(t, alice, { walletId: seeded.walletId, condition: "unusual_activity", threshold: 4 });
    const freshAlert = await createAlert(t, alice, { walletId: fresh.walletId, condition: "unusual_activity", threshold: 4 });
    const afterTracking = await countersOf(t, busy);
    expect(Object.keys(afterTracking.hours).length).toBeGreaterThan(100);
    // What `npm run reseed-activity` rebuilds from the same history (workers stopped): the same counters.
    await reseedActivity(t.deps);
    expect(await countersOf(t, busy)).toEqual(afterTracking);
    // Seeding left no counting marker or answers of its own behind.
    expect(await redis.keys(`${prefix}:activity-batch:seed:*`)).toEqual([]);
    expect(await redis.keys(`${prefix}:activity-answers:seed:*`)).toEqual([]);

    await evaluated(() => ingestTransactions(t, alice, [...burst(busy), ...burst(newcomer)]));
    // Without history, the baseline is the floor of 1 an hour and the 4th send fires; with its week, the limit is 8.
    expect(await eventsOf(t, freshAlert)).toMatchObject([{ condition: "unusual_activity", observed: 4 }]);
    expect(await eventsOf(t, seededAlert)).toEqual([]);
  });

  it("does not count the payees it paid before its tracking as new counterparties", async () => {
    const watch = riskWatch(t, alice);
    const wallet = randomAddress();
    const payees = Array.from({ length: 10 }, randomAddress);
    const now = Math.floor(Date.now() / 1000);
    // Five paid a month ago (history older than the replayed days), five three hours ago.
    await evaluated(() => ingestTransactions(t, alice, payees.slice(0, 5).map((to, k) => tx({ from: wallet, to, blockTime: now - 30 * 86_400 + k }))));
    await ingestedDaysAgo(wallet, 30);
    await evaluated(() => ingestTransactions(t, alice, payees.slice(5).map((to, k) => tx({ from: wallet, to, blockTime: now - 3 * HOUR + k }))));

    const tracked = await track(t, alice, wallet);
    const alertId = await createAlert(t, alice, { walletId: tracked.walletId, condition: "risk_score_increase", threshold: 10 });
    expect((await countersOf(t, wallet)).counterparties).toEqual(payees.map(counterpartyKey).sort());

    // Ten sends within the hour: to ten addresses it never paid, that is new_counterparty_burst.
    await evaluated(() => watch.ingest(payees.map((to, k) => tx({ from: wallet, to, blockTime: now - 600 + k * 30 }))));
    expect(await watch.riskOf(tracked.walletId)).toEqual({ riskScore: 0, riskFactors: [] });
    expect(await eventsOf(t, alertId)).toEqual([]);
  });

  it("changes no counters when another caller tracks it already", async () => {
    const first = await track(t, alice);
    await evaluated(() => ingestInBatches(busyWeek(first.address).slice(0, 20), 10));
    // The counters as they stand, not as the history would rebuild them: lost, then one batch counted since.
    await redis.unlink(...Object.values(activityKeys(prefix, first.address)));
    await evaluated(() => ingestTransactions(t, alice, [tx({ from: first.address, to: randomAddress(), blockTime: H0 * HOUR })]));
    const before = await countersOf(t, first.address);
    expect(before.hotState).not.toBeNull();

    const second = await t.app.inject({ method: "POST", url: "/v1/wallets", headers: bearer(bob), payload: { address: first.address } });
    expect(second.statusCode).toBe(201);
    expect(await countersOf(t, first.address)).toEqual(before);
  });

  it("is tracked all the same when Redis fails while its counters are seeded, with no behavioural factors, and its counters are deleted again", async () => {
    const address = randomAddress();
    await evaluated(() => ingestTransactions(t, alice, wave(address)));
    // A Redis that deletes keys but refuses the counting script (as one that is full does).
    const scripted = await startScriptedRedis((command) => {
      if (command[0] === "INFO") return bulkInfo("# Server\r\nredis_version:7.2.0\r\nloading:0\r\n");
      if (command[0] === "UNLINK") return ":0\r\n";
      if (command[0] === "EVALSHA" || command[0] === "EVAL") return "-OOM command not allowed when used memory > 'maxmemory'.\r\n";
      return plainAnswer(command);
    });
    const failing = createCommandRedis(scripted.url);
    const warnings: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        warnings.push(chunk.toString());
        done();
      },
    });
    try {
      expect(await whenReady(failing, 5_000)).toBe(true);
      const id = newId("wal");
      const outcome = await trackWallet(
        { ...t.deps, redis: failing, logger: createLogger("warn", sink) },
        { id, owner: "alice", address, alias: null, tags: [] },
      );
      expect(outcome).toEqual({ kind: "tracked" });
      const shown = await t.app.inject({ url: `/v1/wallets/${id}`, headers: bearer(alice) });
      expect(shown.statusCode).toBe(200);
      // Its counters start from nothing: so does its behaviour (seeded, the wave gave high_velocity).
      expect(shown.json()).toMatchObject({ riskScore: 0, riskFactors: [] });
      expect(warnings.join("")).toContain("tracking: could not seed the activity counters from the stored history");
      // The keys deleted, the script refused, the keys deleted again (a seeding cut short is partial).
      const commands = scripted.commands().map(([name]) => name);
      expect(commands.filter((name) => name === "UNLINK" || name === "EVALSHA" || name === "EVAL")).toEqual(["UNLINK", "EVALSHA", "UNLINK", "UNLINK"]);
    } finally {
      failing.disconnect();
      await scripted.close();
    }
  });

  it("takes no behavioural factors from a seeding that failed after its counting answered: the counters it was scored on are deleted", async () => {
    const address = randomAddress();
    await evaluated(() => ingestTransactions(t, alice, wave(address)));
    // A Redis that counts, then fails as the seeding deletes its markers (the connection lost at that moment).
    const failing = createCommandRedis(t.config.redisUrl);
    const unlink = failing.unlink.bind(failing) as (...keys: string[]) => Promise<number>;
    (failing as unknown as { unlink: (...keys: string[]) => Promise<number> }).unlink = (...keys) =>
      keys.some((key) => key.startsWith(`${prefix}:activity-batch:seed:`)) ? Promise.reject(new Error("Connection is closed.")) : unlink(...keys);
    try {
      expect(await whenReady(failing, 5_000)).toBe(true);
      const id = newId("wal");
      const outcome = await trackWallet({ ...t.deps, redis: failing, logger: createLogger("silent") }, { id, owner: "alice", address, alias: null, tags: [] });
      expect(outcome).toEqual({ kind: "tracked" });
      const shown = await t.app.inject({ url: `/v1/wallets/${id}`, headers: bearer(alice) });
      expect(shown.json()).toMatchObject({ riskScore: 0, riskFactors: [] });
      expect((await countersOf(t, address)).hotState).toBeNull();
    } finally {
      failing.disconnect();
    }
  });
});
