// Activity counters in Redis: how busy each address has been, by the transactions' block time.
//
// Per address, four keys:
//   <prefix>:activity:<address>     the hot state, a msgpack array: the newest block time, the
//                                   current hour's counts (transactions, failed sent, SOL sent),
//                                   cached sums (previous 7 days, last 23 hours), the dormancy
//                                   record, the newest send's block time, and the last 120
//                                   minutes as (minute, transactions, new counterparties) buckets;
//   <prefix>:activity-h:<address>   a hash of finished hours: c<hour> transactions (kept 171 h),
//                                   f<hour> failed sent and o<hour> SOL sent (kept 24 h);
//   <prefix>:activity-cp:<address>  a set of its counterparties (by a 12-character prefix), at
//                                   most 1,000 (trimmed to 500 at random, once an hour): every
//                                   other side it dealt with, either way, failed or not; of
//                                   those it sent to, the ones not in it yet are the new
//                                   counterparties (src/domain/risk/dealings.ts). Kept 100 days
//                                   after the address's last activity, not 8: "never dealt with"
//                                   must survive a payroll's fortnightly or quarterly cycle;
//   <prefix>:activity-last:<address> the block time of its newest send (its own transaction,
//                                   failed too), kept 3 years: what a wake-up after the other
//                                   keys expired measures its silence from. Only sends end a
//                                   silence (dormant_reactivation is about the keys being used:
//                                   a stranger's dust must not wake a cold wallet). Keys written
//                                   before this rule hold the newest transaction of any kind,
//                                   and are read as the newest send until the address sends.
// A batch reads every hot state of a chunk with one MGET and writes each back with one SET;
// the hour hash is touched when an hour finishes (and for late transactions), the set once
// per batch when the address has counterparties (more when it sent: once per minute of the
// last hour it sent in, whose additions are that minute's new ones, once for the rest). The
// cached sums are recomputed from the hour hash once an hour per address.
//
// One Lua script per evaluation (in chunks of about 2,000 addresses) adds the events and reads
// the results atomically. An evaluation may cover several ingest batches: they are steps of the
// call, each answered as of its own events and the earlier steps' (an address's state is still
// read and written once). A re-run after a crash may group them differently; so addresses
// fall into fixed buckets (a hash of the address), a chunk always holds whole buckets, and a
// bit per (batch, bucket) in the batch's marker records that those events are counted: a
// re-run does not add them again, however the batches are grouped. Nor does it read them from
// the counters, which hold the lost run's later batches by then: beside the marker, a hash per
// batch keeps, per bucket, what the counting answered for each address, and the re-run answers
// with that (unless it needs per-event windows that the first run did not). The markers and
// answers are deleted once the evaluation has committed (a batch marked evaluated is never
// evaluated again), and expire after a day if that deletion is lost. Keys expire 8 days after
// their address was last active (its counterparties 100 days, its newest send 3 years).
//
// Only tracked addresses are counted (see scoring.ts); the tracked set is read when the
// evaluation starts, so an address counts from the first evaluation that begins after its
// tracking committed.
//
// Postgres keeps every transaction but not these counts: a Redis that lost them is noticed by
// the workers (activity-reseed-watch.ts), and `npm run reseed-activity` rebuilds them by
// replaying the evaluated batches through this same counting (activity-reseed.ts).
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import type { Redis } from "ioredis";
import { pack, unpack } from "msgpackr";

/** Addresses per script call: long enough to be cheap, short enough not to hold Redis for long. */
const CHUNK_ADDRESSES = 2_000;
/** How long a batch's "already counted" marker lives unless deleted: far beyond any crash-recovery delay. */
const MARKER_TTL_SECONDS = 24 * 3600;
/** Counterparties are stored by this prefix of their address: plenty to tell them apart. */
// activity.lua's CP_LENGTH (set from this): it splits an event's run-together prefixes by this length.
export const COUNTERPARTY_KEY_LENGTH = 12;
/**
 * The expiries and the counterparty set's cap, for activity.lua (KEY_TTL, CP_KEY_TTL, LAST_TTL,
 * CP_CAP, set by the line SCRIPT puts before it) and for what rebuilds the keys outside the
 * script (activity-reseed*.ts): the hot state and hour buckets, the counterparties, the newest send.
 */
export const ACTIVITY_TTL_SECONDS = 8 * 86_400;
export const COUNTERPARTIES_TTL_SECONDS = 100 * 86_400;
export const LAST_SEND_TTL_SECONDS = 3 * 365 * 86_400;
export const COUNTERPARTIES_CAP = 1_000;
// The script takes these from one line put before it, so the counting and the reseed cannot
// drift apart; being part of the script's text, they cost no argument on a call.
const SCRIPT =
  `local KEY_TTL, LAST_TTL, CP_KEY_TTL, CP_CAP, CP_LENGTH = ${ACTIVITY_TTL_SECONDS}, ${LAST_SEND_TTL_SECONDS}, ` +
  `${COUNTERPARTIES_TTL_SECONDS}, ${COUNTERPARTIES_CAP}, ${COUNTERPARTY_KEY_LENGTH}\n` +
  readFileSync(new URL("./activity.lua", import.meta.url), "utf8");
const SCRIPT_SHA = createHash("sha1").update(SCRIPT).digest("hex");
/** Address buckets: the unit of the "already counted" markers. Changing it re-counts in-flight batches. */
const BUCKETS = 16;

export type ActivityEvent = {
  /** The ingest batch the transaction came in: with the address's bucket, its "counted" marker. */
  batchId: string;
  blockTime: number;
  /** The address sent it (its own transaction, failed or not, self-transfers too): it ends a silence (dormant_reactivation). */
  sent: boolean;
  /** The address sent this transaction and it failed. */
  failedSent: boolean;
  /** SOL the address sent in this (successful) transaction, else 0; summed over its legs to the lamport (addSol). */
  solSent: number;
  /**
   * The other sides of its legs that it sent to (failed sends too), each once; none for a
   * self-transfer. Those not remembered yet are new counterparties (new_counterparty_burst).
   */
  sentTo: string[];
  /** The other sides it only received from (none of sentTo), each once: remembered, never new. */
  receivedFrom: string[];
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
  /** The longest silence a send ended within the last day: the gap since the send before it (seconds); null when none. */
  dormantGapSeconds: number | null;
  /**
   * Transactions in the 60 minutes up to the newest one seen before this step, its events not
   * counted: with transactionsLastHour, unusual_activity's judgment at the newest minute
   * (transaction-firings.ts). Null unless needWindows.
   */
  transactionsLastHourBefore: number | null;
  /** Per event (same order): transactions in the trailing 60 minutes at it, itself included. */
  countAfter: number[] | null;
  /** Per event (same order): transactions in the 168 whole hours before the hour preceding its own hour. */
  previous7DaysAt: number[] | null;
  /**
   * The newest minute (Unix minutes) seen before this step, null when none (or not known: an
   * answer a re-run found stored by an older version). Null unless needWindows.
   */
  newestMinuteBefore: number | null;
  /**
   * The 168 whole hours before the hour preceding newestMinuteBefore's own hour: the baseline
   * that the trailing hour at that minute was judged by (transactionsLastHourBefore's), which
   * unusual_activity compares its next verdict with, as the limit moves at each hour boundary.
   * Null when there is no newest minute before, or unless needWindows (or not known: an answer
   * a re-run found stored by an older version).
   */
  previous7DaysBefore: number | null;
};

type ScriptRow = number[];

/** Adds the events not counted yet (each batch's once) and returns each address's activity. */
export async function applyBatchActivity(
  redis: Redis,
  prefix: string,
  inputs: readonly AddressEvents[],
): Promise<Map<string, AddressActivity>> {
  return (await applyActivityInOrder(redis, prefix, [inputs]))[0]!;
}

/**
 * The same for several steps in turn (the batches of an evaluation group, in ingest order):
 * each step's activity is as of its own events and those of the steps before it, as if the
 * step were evaluated alone. An address's steps go in one script call, so its state is read
 * and written once however many steps it is in.
 */
export async function applyActivityInOrder(
  redis: Redis,
  prefix: string,
  steps: ReadonlyArray<readonly AddressEvents[]>,
): Promise<Array<Map<string, AddressActivity>>> {
  const results = steps.map(() => new Map<string, AddressActivity>());
  // Two calls in flight: the next chunk is encoded and sent while Redis runs the one before
  // (not all at once: a long queue of scripts would hold every other Redis client back).
  let previous: Promise<void> | undefined;
  for (const chunk of chunksOfBuckets(byAddress(steps))) {
    const call = applyChunk(redis, prefix, chunk, results);
    // Its failure is reported by the await below; were the previous call's reported first,
    // this one would be left behind, and its failure must not go unhandled (it ends the process).
    call.catch(() => {});
    if (previous) await previous;
    previous = call;
  }
  await previous;
  return results;
}

/** An address's events of each step it is in, steps in order. */
type AddressSteps = { address: string; needWindows: boolean; steps: Array<{ step: number; input: AddressEvents }> };

function byAddress(steps: ReadonlyArray<readonly AddressEvents[]>): AddressSteps[] {
  const addresses = new Map<string, AddressSteps>();
  steps.forEach((inputs, step) => {
    for (const input of inputs) {
      let entry = addresses.get(input.address);
      if (!entry) {
        entry = { address: input.address, needWindows: false, steps: [] };
        addresses.set(input.address, entry);
      }
      entry.needWindows ||= input.needWindows;
      entry.steps.push({ step, input });
    }
  });
  return [...addresses.values()];
}

/** One script call: encodes the chunk, sends it, and puts each address's activity at each of its steps in `results`. */
async function applyChunk(
  redis: Redis,
  prefix: string,
  chunk: readonly Bucketed[],
  results: ReadonlyArray<Map<string, AddressActivity>>,
): Promise<void> {
  // Per call: the batches' marker keys, and the (batch, bucket) pairs the events point at.
  const keyIndexes = new Map<string, number>();
  const batchIds: string[] = [];
  const pairIndexes = new Map<number, number>();
  const pairs: Array<[number, number]> = [];
  const markerOf = (batchId: string, bucket: number) => {
    let key = keyIndexes.get(batchId);
    if (key === undefined) {
      batchIds.push(batchId);
      keyIndexes.set(batchId, (key = batchIds.length));
    }
    const code = key * BUCKETS + bucket;
    let pair = pairIndexes.get(code);
    if (pair === undefined) {
      pairs.push([key, bucket]);
      pairIndexes.set(code, (pair = pairs.length));
    }
    return pair;
  };
  const payload = encode(chunk, markerOf);
  // The markers, then the answer hashes in the same order (activity.lua's KEYS).
  const keys = [...batchIds.map((batchId) => countedMarkerKey(prefix, batchId)), ...batchIds.map((batchId) => answersKey(prefix, batchId))];
  const args = [prefix, payload, String(MARKER_TTL_SECONDS), JSON.stringify(pairs), String(batchIds.length)];
  const rows = unpack(await runScript(redis, keys, args)) as ScriptRow[][];
  chunk.forEach(({ entry }, i) => {
    // One row per step the address is in, in the same order.
    rows[i]!.forEach((row, k) => {
      const { step, input } = entry.steps[k]!;
      results[step]!.set(entry.address, decode(input, row));
    });
  });
}

const countedMarkerKey = (prefix: string, batchId: string) => `${prefix}:activity-batch:${batchId}`;

/** Per bucket, what counting the batch's events answered: what a re-run after a crash answers with. */
const answersKey = (prefix: string, batchId: string) => `${prefix}:activity-answers:${batchId}`;

const countedFlagKey = (prefix: string, batchId: string) => `${prefix}:activity-done:${batchId}`;

/**
 * Flags these batches as counted whole: every call for their events has returned. An
 * evaluation of later batches waits for the flags of earlier ones that other evaluations hold
 * (see count-order.ts). `passed` marks batches a later evaluation stopped waiting for (their
 * holder hung): none waits for them again.
 */
export async function flagCountedBatches(redis: Redis, prefix: string, batchIds: readonly string[], passed = false): Promise<void> {
  if (batchIds.length === 0) return;
  const flags = redis.pipeline();
  for (const batchId of batchIds) flags.set(countedFlagKey(prefix, batchId), passed ? PASSED : "1", "EX", MARKER_TTL_SECONDS);
  const failed = (await flags.exec())?.find(([error]) => error);
  if (failed) throw failed[0];
}

const PASSED = "passed";

/** Which of these batches are flagged (counted, or passed), and which of those were passed. */
export async function flaggedCountedBatches(
  redis: Redis,
  prefix: string,
  batchIds: readonly string[],
): Promise<{ flagged: Set<string>; passed: Set<string> }> {
  if (batchIds.length === 0) return { flagged: new Set(), passed: new Set() };
  const flags = await redis.mget(...batchIds.map((batchId) => countedFlagKey(prefix, batchId)));
  return {
    flagged: new Set(batchIds.filter((_, i) => flags[i] !== null)),
    passed: new Set(batchIds.filter((_, i) => flags[i] === PASSED)),
  };
}

/**
 * Forgets which of these batches' events are counted: only once their evaluation has
 * committed, when nothing will evaluate them again. Losing this call costs memory for a day.
 */
export async function forgetCountedBatches(redis: Redis, prefix: string, batchIds: readonly string[]): Promise<void> {
  if (batchIds.length === 0) return;
  await redis.unlink(
    ...batchIds.flatMap((batchId) => [countedMarkerKey(prefix, batchId), answersKey(prefix, batchId), countedFlagKey(prefix, batchId)]),
  );
}

/**
 * Deletes an address's counters: for an address becoming tracked, whose keys (left from an
 * earlier period of tracking) miss what it did while untracked.
 */
export async function forgetAddressActivity(redis: Redis, prefix: string, address: string): Promise<void> {
  await redis.unlink(...Object.values(activityKeys(prefix, address)));
}

/** The key of an address's hot state (activity.lua spells the same names): it exists once the address is counted. */
export const activityStateKey = (prefix: string, address: string): string => `${prefix}:activity:${address}`;

/** An address's four keys, as activity.lua names them (see the top of this file). */
export const activityKeys = (prefix: string, address: string) => ({
  state: activityStateKey(prefix, address),
  hours: `${prefix}:activity-h:${address}`,
  counterparties: `${prefix}:activity-cp:${address}`,
  lastSend: `${prefix}:activity-last:${address}`,
});

/** FNV-1a of the address, folded to a bucket: the same in every process and every run. */
export function bucketOf(address: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < address.length; i++) hash = Math.imul(hash ^ address.charCodeAt(i), 0x01000193);
  return (hash >>> 0) % BUCKETS;
}

type Bucketed = { entry: AddressSteps; bucket: number };

/** The addresses in script calls of whole buckets, each of about CHUNK_ADDRESSES addresses or fewer. */
function chunksOfBuckets(entries: readonly AddressSteps[]): Bucketed[][] {
  const buckets: Bucketed[][] = Array.from({ length: BUCKETS }, () => []);
  for (const entry of entries) {
    const bucket = bucketOf(entry.address);
    buckets[bucket]!.push({ entry, bucket });
  }
  const chunks: Bucketed[][] = [];
  for (const members of buckets) {
    if (members.length === 0) continue;
    const last = chunks.at(-1);
    if (last && last.length + members.length <= CHUNK_ADDRESSES) last.push(...members);
    else chunks.push(members);
  }
  return chunks;
}

function encode(chunk: readonly Bucketed[], markerOf: (batchId: string, bucket: number) => number): Buffer {
  return pack(
    chunk.map(({ entry: { address, needWindows, steps }, bucket }) => {
      const item: Array<string | number> = [address, needWindows ? 1 : 0];
      for (const { input } of steps) {
        item.push(input.events.length);
        // An address's events mostly come from one batch: look its marker up once per run.
        let lastBatch: string | undefined;
        let marker = 0;
        for (const e of input.events) {
          if (e.batchId !== lastBatch) {
            lastBatch = e.batchId;
            marker = markerOf(e.batchId, bucket);
          }
          item.push(
            e.blockTime,
            // The kind, as bits (activity.lua's SENT): no extra field per event.
            (e.failedSent ? 1 : 0) + (e.sent ? 2 : 0),
            e.solSent,
            // Addresses are 32–44 characters, so every prefix has the full length the script cuts by.
            counterpartyKeys(e.sentTo),
            counterpartyKeys(e.receivedFrom),
            marker,
          );
        }
      }
      return item;
    }),
  );
}

/** The counterparties as the script reads them: their prefixes, run together. */
const counterpartyKeys = (addresses: readonly string[]): string => addresses.map(counterpartyKey).join("");

/** A counterparty as the set remembers it. */
export const counterpartyKey = (address: string): string => address.slice(0, COUNTERPARTY_KEY_LENGTH);

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
    transactionsLastHourBefore: input.needWindows ? (row[7] ?? 0) : null,
    countAfter: input.needWindows ? row.slice(8, 8 + input.events.length) : null,
    previous7DaysAt: input.needWindows ? row.slice(8 + input.events.length, 8 + 2 * input.events.length) : null,
    newestMinuteBefore: input.needWindows ? noneAsNull(row[8 + 2 * input.events.length]) : null,
    previous7DaysBefore: input.needWindows ? noneAsNull(row[9 + 2 * input.events.length]) : null,
  };
}

/** activity.lua's NONE (-1), or a field an answer stored by an older version lacks: null. */
const noneAsNull = (value: number | undefined): number | null => (value === undefined || value < 0 ? null : value);

async function runScript(redis: Redis, keys: readonly string[], args: ReadonlyArray<string | Buffer>): Promise<Buffer> {
  try {
    return (await redis.callBuffer("EVALSHA", SCRIPT_SHA, keys.length, ...keys, ...args)) as Buffer;
  } catch (error) {
    // A Redis that has not seen the script yet (new, restarted, flushed) gets it once.
    if (!String((error as Error).message).includes("NOSCRIPT")) throw error;
    return (await redis.callBuffer("EVAL", SCRIPT, keys.length, ...keys, ...args)) as Buffer;
  }
}
