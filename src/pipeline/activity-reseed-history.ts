// The part of the activity counters that outlives a quiet week, rebuilt straight from SQL for
// the history older than the replayed days (activity-reseed-plan.ts says why): each tracked
// address's counterparty set (the newest COUNTERPARTIES_CAP of those it dealt with in batches
// ingested in the 100 days before) and its newest send (of the 3 years before), each expiring
// when the live key would. Written before the replay, which then goes on from them as the
// evaluation did: a replayed payment to one of these is not new, a replayed send after a long
// silence is a wake-up.
import type { Redis } from "ioredis";
import type { Sql } from "../db/client.ts";
import {
  activityKeys,
  COUNTERPARTIES_CAP,
  COUNTERPARTIES_TTL_SECONDS,
  COUNTERPARTY_KEY_LENGTH,
  LAST_SEND_TTL_SECONDS,
} from "./activity.ts";
import { remainingTtl, type ReseedWindows } from "./activity-reseed-plan.ts";
import { loadOlderCounterparties, loadOlderLastSends } from "./activity-reseed-queries.ts";

/** Tracked addresses per pair of queries and Redis pipeline. */
const ADDRESSES_PER_CHUNK = 500;

export type HistoryDeps = { sql: Sql; redis: Redis; config: { queuePrefix: string } };

export type SeededHistory = { lastSends: number; counterpartySets: number; counterparties: number };

/** Writes the older history of every tracked address, a chunk at a time; `each` runs after each chunk. */
export async function seedOlderHistory(
  deps: HistoryDeps,
  trackedSince: ReadonlyMap<string, Date>,
  windows: ReseedWindows,
  now: Date,
  each: () => Promise<void> = async () => {},
): Promise<SeededHistory> {
  const seeded: SeededHistory = { lastSends: 0, counterpartySets: 0, counterparties: 0 };
  const nowSeconds = Math.floor(now.getTime() / 1000);
  const entries = [...trackedSince];
  for (let i = 0; i < entries.length; i += ADDRESSES_PER_CHUNK) {
    const chunk = entries.slice(i, i + ADDRESSES_PER_CHUNK);
    const tracked = { addresses: chunk.map(([address]) => address), since: chunk.map(([, since]) => since) };
    const [lastSends, counterparties] = await Promise.all([
      loadOlderLastSends(deps.sql, tracked, { from: windows.lastSendsFrom, before: windows.replayFrom }),
      loadOlderCounterparties(
        deps.sql,
        tracked,
        { from: windows.counterpartiesFrom, before: windows.replayFrom },
        COUNTERPARTY_KEY_LENGTH,
        COUNTERPARTIES_CAP,
      ),
    ]);
    // Newest first per address (the query's order, at most the cap): the set's members.
    const byAddress = new Map<string, { members: string[]; touched: number }>();
    for (const row of counterparties) {
      const entry = byAddress.get(row.address) ?? { members: [], touched: row.touched };
      byAddress.set(row.address, entry);
      entry.members.push(row.counterparty);
    }
    // The live keys' expiries run from the last evaluation that counted the address (the script
    // renews them then), not from the block time: history back-filled today with block times of
    // last year lives its 100 days from today.
    const touchedAt = (address: string) => Math.max(byAddress.get(address)?.touched ?? 0, lastSends.get(address)?.evaluatedAt ?? 0);
    const writes = deps.redis.pipeline();
    for (const [address, { blockTime }] of lastSends) {
      const ttl = remainingTtl(touchedAt(address), LAST_SEND_TTL_SECONDS, nowSeconds);
      if (ttl === 0) continue;
      writes.set(activityKeys(deps.config.queuePrefix, address).lastSend, String(blockTime), "EX", ttl);
      seeded.lastSends++;
    }
    for (const [address, { members }] of byAddress) {
      const ttl = remainingTtl(touchedAt(address), COUNTERPARTIES_TTL_SECONDS, nowSeconds);
      if (ttl === 0) continue;
      const key = activityKeys(deps.config.queuePrefix, address).counterparties;
      writes.sadd(key, ...members);
      writes.expire(key, ttl);
      seeded.counterpartySets++;
      seeded.counterparties += members.length;
    }
    const failed = (await writes.exec())?.find(([error]) => error);
    if (failed) throw failed[0];
    await each();
  }
  return seeded;
}
