// Posts the synthetic feed at a steady rate: the transactions due by now (rate × elapsed) go
// out in batches of `batchSize`, at most `maxInFlight` requests at once. A batch leaves once it
// is full; one that a low rate cannot fill soon leaves part-full once its oldest transaction
// has waited PARTIAL_BATCH_WAIT_MS, so a request carries what --batch says, not whatever came
// due since the last look. When the API falls behind by more than a second's worth, the excess
// is dropped and counted as `behind` rather than queued without bound, so the rate printed is
// the rate the API actually took.
import { ApiError, type ApiClient } from "./client.ts";
import type { TokenSource } from "./tokens.ts";
import type { TrafficGenerator } from "./traffic.ts";

export type FeedStats = {
  sent: number;
  accepted: number;
  duplicates: number;
  /** Transactions in batches the API refused or that failed after the client's retries. */
  errors: number;
  behind: number;
};

export type FeedOptions = {
  client: Pick<ApiClient, "postTransactions">;
  generator: Pick<TrafficGenerator, "next">;
  /** Transactions per second. */
  rate: number;
  batchSize: number;
  /** Stop after this long; without it, run until `signal` aborts. */
  durationMs?: number;
  signal: AbortSignal;
  report: (line: string) => void;
  maxInFlight?: number;
  /** Asked for a new token after a 401; the batch is then sent once more. Without it a 401 ends the run. */
  tokens?: Pick<TokenSource, "renew">;
  /** Milliseconds on a monotonic clock. */
  now?: () => number;
  /** Waits between looks at the clock (a test passes one that moves its own clock). */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
};

/** The longest a due transaction waits for its batch to fill before it is sent in a part-full one. */
export const PARTIAL_BATCH_WAIT_MS = 1_000;
/** The longest between two looks at the clock: the per-second line, and requests that finished. */
const MAX_TICK_MS = 100;

/** Transaction n (from 1) is due n / rate seconds into the run. */
const dueAtMs = (n: number, rate: number) => (n * 1000) / rate;

/**
 * How many transactions to send now, `generated` having gone already: a full batch once one is
 * due; the due ones in a part-full batch once the oldest of them has waited
 * PARTIAL_BATCH_WAIT_MS; else none.
 */
export function batchDueNow(elapsedMs: number, generated: number, rate: number, batchSize: number): number {
  const due = Math.floor((elapsedMs / 1000) * rate) - generated;
  if (due >= batchSize) return batchSize;
  if (due <= 0) return 0;
  return elapsedMs - dueAtMs(generated + 1, rate) >= PARTIAL_BATCH_WAIT_MS ? due : 0;
}

/** Milliseconds from `elapsedMs` until batchDueNow has something to send (at least 1). */
export function untilNextBatchMs(elapsedMs: number, generated: number, rate: number, batchSize: number): number {
  const full = dueAtMs(generated + batchSize, rate);
  const partFull = dueAtMs(generated + 1, rate) + PARTIAL_BATCH_WAIT_MS;
  return Math.max(1, Math.ceil(Math.min(full, partFull) - elapsedMs));
}

/** Half a second's worth per request, within the API's 1..1000 per batch. */
export const defaultBatchSize = (rate: number): number => Math.min(1000, Math.max(1, Math.ceil(rate / 2)));

const emptyStats = (): FeedStats => ({ sent: 0, accepted: 0, duplicates: 0, errors: 0, behind: 0 });
const MAX_DISTINCT_ERRORS = 5;

export async function runFeed(options: FeedOptions): Promise<FeedStats> {
  const now = options.now ?? (() => performance.now());
  const maxInFlight = options.maxInFlight ?? 4;
  const total = emptyStats();
  let window = emptyStats();
  const inFlight = new Set<Promise<void>>();
  const errorsSeen = new Set<string>();
  let fatal: Error | undefined;

  type Batch = ReturnType<FeedOptions["generator"]["next"]>;
  // A token refused once may only have aged out (JWT_MAX_TOKEN_AGE): a new one, and the batch once more.
  const post = async (batch: Batch) => {
    try {
      return await options.client.postTransactions(batch);
    } catch (error) {
      if (!(error instanceof ApiError && error.status === 401 && (await options.tokens?.renew()))) throw error;
      return options.client.postTransactions(batch);
    }
  };

  const send = (batch: Batch) => {
    for (const stats of [total, window]) stats.sent += batch.length;
    const request = post(batch).then(
      ({ accepted, duplicates }) => {
        for (const stats of [total, window]) {
          stats.accepted += accepted;
          stats.duplicates += duplicates;
        }
      },
      (error: unknown) => {
        for (const stats of [total, window]) stats.errors += batch.length;
        // A refused token will not get better by trying again: stop the run.
        if (error instanceof ApiError && (error.status === 401 || error.status === 403)) fatal ??= error;
        const message = (error as Error).message;
        if (!errorsSeen.has(message) && errorsSeen.size < MAX_DISTINCT_ERRORS) {
          errorsSeen.add(message);
          options.report(`error: ${message}`);
        }
      },
    );
    const tracked = request.finally(() => inFlight.delete(tracked));
    inFlight.add(tracked);
  };

  const start = now();
  let generated = 0;
  let lastReport = start;
  const sleep = options.sleep ?? pause;
  const timeUp = () => options.durationMs !== undefined && now() - start >= options.durationMs;
  const finished = () => options.signal.aborted || fatal !== undefined || timeUp();

  while (!finished()) {
    const elapsed = now() - start;
    const due = Math.floor((elapsed / 1000) * options.rate) - generated;
    if (due > options.rate && inFlight.size >= maxInFlight) {
      const dropped = due - options.rate;
      for (const stats of [total, window]) stats.behind += dropped;
      generated += dropped;
    }
    for (let count; inFlight.size < maxInFlight && (count = batchDueNow(elapsed, generated, options.rate, options.batchSize)) > 0; ) {
      send(options.generator.next(count));
      generated += count;
    }
    if (now() - lastReport >= 1000) {
      options.report(line(Math.round((now() - start) / 1000), window, total, inFlight.size));
      window = emptyStats();
      lastReport += 1000 * Math.floor((now() - lastReport) / 1000);
    }
    // With every slot taken, the next look is when a request finishes (or the per-second line is due).
    const full = inFlight.size >= maxInFlight;
    const untilBatch = full ? MAX_TICK_MS : untilNextBatchMs(now() - start, generated, options.rate, options.batchSize);
    const wait = sleep(Math.max(1, Math.min(MAX_TICK_MS, untilBatch, lastReport + 1000 - now())), options.signal);
    await (full ? Promise.race([wait, ...inFlight]) : wait);
  }
  // At --duration's end the part-full batch goes too: the run sends rate × duration.
  if (timeUp() && !options.signal.aborted && fatal === undefined) {
    const owed = Math.floor(((options.durationMs ?? 0) / 1000) * options.rate) - generated;
    for (let left = owed; left > 0; left -= options.batchSize) {
      while (inFlight.size >= maxInFlight) await Promise.race(inFlight);
      const count = Math.min(left, options.batchSize);
      send(options.generator.next(count));
      generated += count;
    }
  }
  await Promise.allSettled([...inFlight]);
  if (fatal) throw fatal;
  return total;
}

function line(second: number, window: FeedStats, total: FeedStats, inFlight: number): string {
  const behind = window.behind > 0 ? ` behind=${window.behind}` : "";
  return (
    `[${String(second).padStart(4)}s] sent=${window.sent} accepted=${window.accepted} duplicates=${window.duplicates} ` +
    `errors=${window.errors}${behind} in-flight=${inFlight} | total sent=${total.sent} accepted=${total.accepted} errors=${total.errors}`
  );
}

/** Resolves after `ms`, or at once when the signal aborts (leaving no listener behind). */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}
