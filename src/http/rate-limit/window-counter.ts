// Per-caller request counting in fixed one-minute windows (pure; the clock is passed in).
//
// Every API process counts locally and adds its counts to a shared Redis counter a few
// times a second (redis-sync.ts), learning the other processes' counts in the same reply.
// A request is judged against "shared count as last seen + this process's unsent count",
// so the limit holds across processes to within the traffic of one sync interval, and no
// request waits on a Redis round trip (which cost half the API's throughput).

export type Decision = { allowed: boolean; limit: number; remaining: number; resetSeconds: number };
export type PendingCount = { caller: string; window: number; count: number };

type CallerState = { window: number; shared: number; unsent: number };

export type WindowCounter = {
  take: (caller: string, nowMs: number) => Decision;
  /** Counts not yet added to the shared counter; they are handed over, not cleared twice. */
  drain: (nowMs: number) => PendingCount[];
  /** The shared total for (caller, window) after this process's counts were added. */
  learn: (caller: string, window: number, sharedTotal: number) => void;
  /** A sync failed: the drained counts go back, to be sent with the next one. */
  restore: (pending: readonly PendingCount[]) => void;
};

export const WINDOW_MS = 60_000;
export const windowOf = (nowMs: number): number => Math.floor(nowMs / WINDOW_MS);

export function createWindowCounter(limit: number): WindowCounter {
  const callers = new Map<string, CallerState>();

  const stateFor = (caller: string, window: number): CallerState => {
    let state = callers.get(caller);
    if (!state || state.window !== window) {
      state = { window, shared: 0, unsent: 0 };
      callers.set(caller, state);
    }
    return state;
  };

  return {
    take: (caller, nowMs) => {
      const window = windowOf(nowMs);
      const state = stateFor(caller, window);
      const used = state.shared + state.unsent;
      const resetSeconds = Math.max(1, Math.ceil(((window + 1) * WINDOW_MS - nowMs) / 1000));
      if (used >= limit) return { allowed: false, limit, remaining: 0, resetSeconds };
      state.unsent += 1;
      return { allowed: true, limit, remaining: limit - used - 1, resetSeconds };
    },
    drain: (nowMs) => {
      const pending: PendingCount[] = [];
      for (const [caller, state] of callers) {
        if (state.unsent > 0) {
          pending.push({ caller, window: state.window, count: state.unsent });
          // What is sent now counts as shared until Redis answers with the true total.
          state.shared += state.unsent;
          state.unsent = 0;
        } else if (state.window < windowOf(nowMs)) {
          callers.delete(caller);
        }
      }
      return pending;
    },
    learn: (caller, window, sharedTotal) => {
      const state = callers.get(caller);
      if (state && state.window === window) state.shared = Math.max(state.shared, sharedTotal);
    },
    restore: (pending) => {
      for (const { caller, window, count } of pending) {
        const state = callers.get(caller);
        if (state && state.window === window) {
          state.shared -= count;
          state.unsent += count;
        }
      }
    },
  };
}
