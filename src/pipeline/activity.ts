// Activity counters in Redis: how busy each address has been, by the transactions' block time.
//
// Per address, three keys:
//   <prefix>:activity:<address>     the hot state, a msgpack array: the newest block time, the
//                                   current hour's counts (transactions, failed sent, SOL sent),
//                                   cached sums (previous 7 days, last 23 hours), the dormancy
//                                   record, and the trailing 60 minutes as (minute, transactions,
//                                   new counterparties) buckets;
//   <prefix>:activity-h:<address>   a hash of finished hours: c<hour> transactions (kept 170 h),
//                                   f<hour> failed sent and o<hour> SOL sent (kept 24 h);
//   <prefix>:activity-cp:<address>  a set of its counterparties (by a 12-character prefix), at
//                                   most 1,000 (trimmed to 500 at random, once an hour).
// A batch reads every hot state of a chunk with one MGET and writes each back with one SET;
// the hour hash is touched when an hour finishes (and for late transactions), the set once
// per batch when the address has counterparties. The cached sums are recomputed from the
// hour hash once an hour per address.
//
// One Lua script per batch (in chunks of 2,000 addresses) adds the batch and reads the results
// atomically; a marker per batch and chunk makes a re-run after a crash read without adding
// again. Keys expire 8 days after their address was last active.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import type { Redis } from "ioredis";

const SCRIPT = readFileSync(new URL("./activity.lua", import.meta.url), "utf8");
const SCRIPT_SHA = createHash("sha1").update(SCRIPT).digest("hex");

/** Addresses per script call: long enough to be cheap, short enough not to hold Redis for long. */
const CHUNK_ADDRESSES = 2_000;
/** How long a batch's "already counted" marker lives: far beyond any crash-recovery delay. */
const MARKER_TTL_SECONDS = 24 * 3600;
/** Counterparties are stored by this prefix of their address: plenty to tell them apart. */
const COUNTERPARTY_KEY_LENGTH = 12;

export type ActivityEvent = {
  blockTime: number;
  /** The address sent this transaction and it failed. */
  failedSent: boolean;
  /** SOL the address sent in this (successful) transaction, else 0. */
  solSent: number;
  /** The other side; null for a self-transfer. */
  counterparty: string | null;
};

export type AddressEvents = {
  address: string;
  /** Whether per-event window counts are needed (the address has unusual_activity alerts). */
  needWindows: boolean;
  /** Oldest first. */
  events: ActivityEvent[];
};

export type AddressActivity = {
  /** Transactions in the 60 minutes up to the newest one seen. */
  transactionsLastHour: number;
  /** Transactions in the 168 whole hours before the hour preceding the newest one's hour. */
  previous7DaysCount: number;
  transactions24h: number;
  failed24h: number;
  solOutflow24h: number;
  newCounterpartiesLastHour: number;
  /** The longest gap before a transaction within the last day (seconds); null when none. */
  dormantGapSeconds: number | null;
  /** Per event (same order): transactions in the trailing 60 minutes at it, itself included. */
  countAfter: number[] | null;
};

type ScriptRow = number[];

/** Adds the batch's events (once per batch id) and returns each address's activity. */
export async function applyBatchActivity(
  redis: Redis,
  prefix: string,
  batchId: string,
  inputs: readonly AddressEvents[],
): Promise<Map<string, AddressActivity>> {
  const result = new Map<string, AddressActivity>();
  const ordered = [...inputs].sort((a, b) => (a.address < b.address ? -1 : a.address > b.address ? 1 : 0));
  for (let start = 0, chunk = 0; start < ordered.length; start += CHUNK_ADDRESSES, chunk++) {
    const part = ordered.slice(start, start + CHUNK_ADDRESSES);
    const marker = `${prefix}:activity-batch:${batchId}:${chunk}`;
    const rows = JSON.parse(await runScript(redis, marker, prefix, encode(part))) as ScriptRow[];
    part.forEach((input, i) => result.set(input.address, decode(input, rows[i]!)));
  }
  return result;
}

function encode(part: readonly AddressEvents[]): string {
  return JSON.stringify(
    part.map(({ address, needWindows, events }) => {
      const item: Array<string | number> = [address, needWindows ? 1 : 0];
      for (const e of events) {
        item.push(
          e.blockTime,
          e.failedSent ? 1 : 0,
          e.solSent,
          e.counterparty === null ? "" : e.counterparty.slice(0, COUNTERPARTY_KEY_LENGTH),
        );
      }
      return item;
    }),
  );
}

function decode(input: AddressEvents, row: ScriptRow): AddressActivity {
  const [lastHour, previous7Days, tx24h, failed24h, solOut24h, newCounterparties, dormantGap] = row;
  return {
    transactionsLastHour: lastHour ?? 0,
    previous7DaysCount: previous7Days ?? 0,
    transactions24h: tx24h ?? 0,
    failed24h: failed24h ?? 0,
    solOutflow24h: solOut24h ?? 0,
    newCounterpartiesLastHour: newCounterparties ?? 0,
    dormantGapSeconds: dormantGap === undefined || dormantGap < 0 ? null : dormantGap,
    countAfter: input.needWindows ? row.slice(7, 7 + input.events.length) : null,
  };
}

async function runScript(redis: Redis, marker: string, prefix: string, payload: string): Promise<string> {
  const args = [marker, prefix, payload, String(MARKER_TTL_SECONDS)];
  try {
    return (await redis.evalsha(SCRIPT_SHA, 1, ...args)) as string;
  } catch (error) {
    // A Redis that has not seen the script yet (new, restarted, flushed) gets it once.
    if (!String((error as Error).message).includes("NOSCRIPT")) throw error;
    return (await redis.eval(SCRIPT, 1, ...args)) as string;
  }
}
