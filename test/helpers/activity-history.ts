// The activity reseed tests' kit: what Redis holds of one address's activity counters, read so
// that two reads compare equal when they hold the same counts (activity-reseed*.test.ts compare
// the live counters with what the reseed rebuilds).
import { unpack } from "msgpackr";
import { activityKeys } from "../../src/pipeline/activity.ts";
import type { TestApp } from "./app.ts";

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
