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
