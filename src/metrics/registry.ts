// One prom-client registry per process (or per app in the tests), never the library's
// global default: two apps in one test process must not share or double-register metrics.
import { collectDefaultMetrics, Registry } from "prom-client";

/** Every metric of ours is named wallet_alerts_*; Node's process metrics keep their usual names. */
export const METRIC_PREFIX = "wallet_alerts_";

export function createMetricsRegistry(): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return registry;
}

/** Runs a probe, giving up after timeoutMs so that a scrape never hangs on a dead dependency. */
export async function withTimeout<T>(probe: () => Promise<T>, timeoutMs: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      probe(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what} did not answer within ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
