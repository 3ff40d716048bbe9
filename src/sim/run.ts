// Posts the synthetic feed at a steady rate: the transactions due by now (rate × elapsed)
// go out in batches, at most `maxInFlight` requests at once. When the API falls behind by
// more than a second's worth, the excess is dropped and counted as `behind` rather than
// queued without bound, so the rate printed is the rate the API actually took.
import { ApiError, type ApiClient } from "./client.ts";
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
  /** Milliseconds on a monotonic clock. */
  now?: () => number;
};

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

  const send = (batch: ReturnType<FeedOptions["generator"]["next"]>) => {
    for (const stats of [total, window]) stats.sent += batch.length;
    const request = options.client.postTransactions(batch).then(
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
  const tickMs = Math.max(5, Math.min(100, (500 * options.batchSize) / options.rate));
  const finished = () =>
    options.signal.aborted || fatal !== undefined || (options.durationMs !== undefined && now() - start >= options.durationMs);

  while (!finished()) {
    const elapsed = now() - start;
    let due = Math.floor((elapsed / 1000) * options.rate) - generated;
    if (due > options.rate && inFlight.size >= maxInFlight) {
      const dropped = due - options.rate;
      for (const stats of [total, window]) stats.behind += dropped;
      generated += dropped;
      due -= dropped;
    }
    while (due > 0 && inFlight.size < maxInFlight) {
      const count = Math.min(due, options.batchSize);
      send(options.generator.next(count));
      generated += count;
      due -= count;
    }
    if (now() - lastReport >= 1000) {
      options.report(line(Math.round((now() - start) / 1000), window, total, inFlight.size));
      window = emptyStats();
      lastReport += 1000 * Math.floor((now() - lastReport) / 1000);
    }
    await pause(tickMs, options.signal);
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
