// Adds each process's request counts to shared per-caller Redis counters every intervalMs,
// in one pipeline, and learns the totals of all processes from the replies.
import type { Redis } from "ioredis";
import { WINDOW_MS, type WindowCounter } from "./window-counter.ts";

export type RateLimitSync = { stop: () => Promise<void> };

export function startRateLimitSync(
  redis: Redis,
  counter: WindowCounter,
  options: { keyPrefix: string; intervalMs: number; now: () => number; onError: (error: unknown) => void },
): RateLimitSync {
  let running: Promise<void> = Promise.resolve();

  const syncOnce = async () => {
    const pending = counter.drain(options.now());
    if (pending.length === 0) return;
    const pipeline = redis.pipeline();
    for (const { caller, window, count } of pending) {
      const key = `${options.keyPrefix}${window}:${caller}`;
      pipeline.incrby(key, count).pexpire(key, 2 * WINDOW_MS);
    }
    try {
      const replies = (await pipeline.exec()) ?? [];
      pending.forEach(({ caller, window }, i) => {
        const [error, total] = replies[i * 2] ?? [new Error("no reply")];
        if (error) throw error;
        counter.learn(caller, window, Number(total));
      });
    } catch (error) {
      // Kept and sent with the next sync; meanwhile this process still enforces what it knows.
      counter.restore(pending);
      options.onError(error);
    }
  };

  const timer = setInterval(() => {
    running = running.then(syncOnce);
  }, options.intervalMs);
  timer.unref();

  return {
    stop: async () => {
      clearInterval(timer);
      await running;
      await syncOnce().catch(() => {});
    },
  };
}
