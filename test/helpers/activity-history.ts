// The activity reseed tests' kit: what Redis holds of one address's activity counters, read so
// that two reads compare equal when they hold the same counts (activity-reseed*.test.ts compare
// the live counters with what the reseed rebuilds), and the workers' check for lost counters
// with its warnings and gauge; and the busy history they count, evaluated by real workers.
import { Writable } from "node:stream";
import { unpack } from "msgpackr";
import { Registry } from "prom-client";
import { createLogger } from "../../src/logger.ts";
import { activityKeys } from "../../src/pipeline/activity.ts";
import { RESEED_COMMAND, createCountersMonitor, type CountersMonitor } from "../../src/pipeline/activity-reseed-watch.ts";
import type { Transaction } from "../../src/domain/types.ts";
import type { TestApp } from "./app.ts";
import { randomAddress } from "./chain.ts";
import { settled, startWorkers, tx } from "./pipeline.ts";
import { ingestTransactions } from "./seed.ts";

export type ActivityCounters = {
  /** The hot state's 16 numbers, and its minute buckets (3 numbers each) sorted by minute; null when the key is gone. */
  hotState: { numbers: number[]; minutes: number[][] } | null;
  hours: Record<string, string>;
  counterparties: string[];
  lastSend: string | null;
};

/** The address's four keys, comparable: the hot state's minute buckets are stored in no particular order. */
export async function countersOf(t: TestApp, address: string): Promise<ActivityCounters> {
  const redis = t.deps.redis;
  const keys = activityKeys(t.config.queuePrefix, address);
  const state = await redis.getBuffer(keys.state);
  let hotState: ActivityCounters["hotState"] = null;
  if (state) {
    const fields = unpack(state) as number[];
    const minutes: number[][] = [];
    for (let k = 16; k < fields.length; k += 3) minutes.push(fields.slice(k, k + 3));
    hotState = { numbers: fields.slice(0, 16), minutes: minutes.sort((a, b) => a[0]! - b[0]!) };
  }
  return {
    hotState,
    hours: await redis.hgetall(keys.hours),
    counterparties: (await redis.smembers(keys.counterparties)).sort(),
    lastSend: await redis.get(keys.lastSend),
  };
}

/**
 * The workers' check for lost counters, with what it logs at warn and above and its gauge: the
 * warnings that name the reseed command, and the gauge's value (undefined before a check).
 */
export function watchedCountersMonitor(t: TestApp): {
  monitor: CountersMonitor;
  warnings: () => string[];
  gauge: () => Promise<number | undefined>;
} {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  const registry = new Registry();
  const monitor = createCountersMonitor({ ...t.deps, logger: createLogger("warn", sink) }, { registry });
  return {
    monitor,
    warnings: () => lines.filter((line) => line.includes(RESEED_COMMAND)),
    gauge: async () => (await registry.getSingleMetric("wallet_alerts_activity_counters_missing")!.get()).values[0]?.value,
  };
}

const HOUR = 3_600;

/** Evaluates what `ingest` stores with real workers, then stops them (a reseed, and a check of what a tracking seeded, run without them). */
export async function evaluatedBy(t: TestApp, ingest: () => Promise<unknown>): Promise<void> {
  const workers = startWorkers(t);
  try {
    await ingest();
    await settled(t);
  } finally {
    await workers.close();
  }
}

/** Ingests the transactions in chain order, in batches of `size`. */
export async function ingestInChainOrder(t: TestApp, token: string, txs: Transaction[], size: number): Promise<void> {
  const ordered = [...txs].sort((a, b) => a.blockTime - b.blockTime);
  for (let i = 0; i < ordered.length; i += size) await ingestTransactions(t, token, ordered.slice(i, i + size));
}

/**
 * A busy wallet's week before the hour `h0` (Unix hours): in each of `hours` hours from h0-2
 * back (the 168 of a baseline, [h0-169, h0-2], by default), a send to one of three payees and a
 * receipt from a funder: 2 an hour.
 */
export function busyWeek(wallet: string, h0: number, hours = 168): Transaction[] {
  const payees = [randomAddress(), randomAddress(), randomAddress()];
  const funder = randomAddress();
  return Array.from({ length: hours }, (_, k) => h0 - 2 - k).flatMap((hour) => [
    tx({ from: wallet, to: payees[hour % 3]!, amount: 0.25, blockTime: hour * HOUR + 600 }),
    tx({ from: funder, to: wallet, amount: 1, blockTime: hour * HOUR + 2_400 }),
  ]);
}

/** Five sends in the first five minutes of the hour `h0`: over 4 × a floor baseline of 1, under 4 × 2. */
export const burstOfFive = (wallet: string, h0: number): Transaction[] =>
  Array.from({ length: 5 }, (_, i) => tx({ from: wallet, to: randomAddress(), amount: 0.1, blockTime: h0 * HOUR + i * 60 }));
