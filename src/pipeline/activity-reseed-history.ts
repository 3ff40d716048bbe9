// The part of the activity counters that outlives a quiet week, rebuilt straight from SQL for
// the history older than the replayed days (activity-reseed-plan.ts says why), for every
// tracked address (the reseed) or for one becoming tracked (activity-seed.ts): each address's
// counterparty set (the newest COUNTERPARTIES_CAP of those it dealt with in batches ingested in
// the 100 days before) and its newest send (of the 3 years before), each expiring when the live
// key would. Written before the replay, which then goes on from them as the
// evaluation did: a replayed payment to one of these is not new, a replayed send after a long
// silence is a wake-up.
import type { Redis } from "ioredis";
import type { TransactionSql } from "postgres";
import type { Sql } from "../db/client.ts";
import {
  activityKeys,
  COUNTERPARTIES_CAP,
  COUNTERPARTIES_TTL_SECONDS,
  COUNTERPARTY_KEY_LENGTH,
  LAST_SEND_TTL_SECONDS,
} from "./activity.ts";
import { remainingTtl, type ReseedWindows } from "./activity-reseed-plan.ts";
import { loadOlderCounterparties, loadOlderLastSends, type OlderLastSend } from "./activity-reseed-queries.ts";

/** Tracked addresses per pair of queries and Redis pipeline. */
const ADDRESSES_PER_CHUNK = 500;

export type HistoryDeps = { sql: Sql; redis: Redis; config: { queuePrefix: string } };

export type SeededHistory = { lastSends: number; counterpartySets: number; counterparties: number };

/** Writes the older history of the addresses, a chunk at a time; `each` runs after each chunk. */
export async function seedOlderHistory(
  deps: HistoryDeps,
  addresses: readonly string[],
  windows: ReseedWindows,
  now: Date,
  each: () => Promise<void> = async () => {},
): Promise<SeededHistory> {
  const seeded: SeededHistory = { lastSends: 0, counterpartySets: 0, counterparties: 0 };
  for (let i = 0; i < addresses.length; i += ADDRESSES_PER_CHUNK) {
    const history = await loadOlderHistory(deps.sql, addresses.slice(i, i + ADDRESSES_PER_CHUNK), windows);
    const written = await writeOlderHistory(deps.redis, deps.config.queuePrefix, history, now);
    seeded.lastSends += written.lastSends;
    seeded.counterpartySets += written.counterpartySets;
    seeded.counterparties += written.counterparties;
    await each();
  }
  return seeded;
}

/** The addresses' older history as read from SQL, to be written by writeOlderHistory. */
export type OlderHistory = {
  lastSends: ReadonlyMap<string, OlderLastSend>;
  /** Per address, the set's members (newest first, at most the cap), and when its newest batch of them was evaluated. */
  counterparties: ReadonlyMap<string, { members: string[]; touched: number }>;
};

/** Reads the older history of the addresses (a chunk of them: both queries take them all at once). */
export async function loadOlderHistory(sql: Sql | TransactionSql, addresses: readonly string[], windows: ReseedWindows): Promise<OlderHistory> {
  const [lastSends, counterparties] = await Promise.all([
    loadOlderLastSends(sql, addresses, { from: windows.lastSendsFrom, before: windows.replayFrom }),
    loadOlderCounterparties(
      sql,
      addresses,
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
  return { lastSends, counterparties: byAddress };
}

/** Writes the older history into the addresses' keys, in one pipeline. */
export async function writeOlderHistory(redis: Redis, prefix: string, history: OlderHistory, now: Date): Promise<SeededHistory> {
  const seeded: SeededHistory = { lastSends: 0, counterpartySets: 0, counterparties: 0 };
  const nowSeconds = Math.floor(now.getTime() / 1000);
  const { lastSends, counterparties } = history;
  // The live keys' expiries run from the last evaluation that counted the address (the script
  // renews them then), not from the block time: history back-filled today with block times of
  // last year lives its 100 days from today.
  const touchedAt = (address: string) => Math.max(counterparties.get(address)?.touched ?? 0, lastSends.get(address)?.evaluatedAt ?? 0);
  const writes = redis.pipeline();
  for (const [address, { blockTime }] of lastSends) {
    const ttl = remainingTtl(touchedAt(address), LAST_SEND_TTL_SECONDS, nowSeconds);
    if (ttl === 0) continue;
    writes.set(activityKeys(prefix, address).lastSend, String(blockTime), "EX", ttl);
    seeded.lastSends++;
  }
  for (const [address, { members }] of counterparties) {
    const ttl = remainingTtl(touchedAt(address), COUNTERPARTIES_TTL_SECONDS, nowSeconds);
    if (ttl === 0) continue;
    const key = activityKeys(prefix, address).counterparties;
    writes.sadd(key, ...members);
    writes.expire(key, ttl);
    seeded.counterpartySets++;
    seeded.counterparties += members.length;
  }
  const failed = (await writes.exec())?.find(([error]) => error);
  if (failed) throw failed[0];
  return seeded;
}
