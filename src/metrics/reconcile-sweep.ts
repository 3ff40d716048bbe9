// When the reconciler's last sweep finished, served by the API's /metrics at scrape time. The
// sweep is the outbox's safety net: while no sweep runs, work whose job Redis lost stays lost,
// and nothing else says so. Sweeps stopped for 16 minutes after a worker whose clock was ahead
// had run one (review `skew`), and nothing showed it. Each sweep writes its end in Redis, with
// Redis's clock (src/pipeline/reconcile.ts); Prometheus compares it with its own `time()`.
import { Gauge, type Registry } from "prom-client";
import { lastSweepKey } from "../pipeline/reconcile.ts";
import { QUEUES } from "../queue/names.ts";
import type { Queues } from "../queue/producers.ts";
import { METRIC_PREFIX } from "./registry.ts";

/** registerScrapeCollectors' wrapper: a bound on the read, no sample and a warning when Redis does not answer. */
export type ScrapeAttempt = (gauge: Gauge, source: string, fill: () => Promise<void>) => Promise<void>;

/** When the last sweep finished (milliseconds, Redis's clock), or null when none has been recorded. */
export async function readLastSweepMs(queues: Queues): Promise<number | null> {
  // Through the queue's own connection: the scrape reads the queue counts the same way.
  const redis = await queues[QUEUES.maintenance].getBackend().client;
  const value = await redis.get(lastSweepKey(queues));
  return value === null ? null : Number(value);
}

export function registerReconcileSweepGauge(registry: Registry, queues: Queues, attempt: ScrapeAttempt): void {
  new Gauge({
    name: `${METRIC_PREFIX}reconcile_last_sweep_timestamp_seconds`,
    help: "When the reconciler's last sweep finished (Unix time, Redis's clock), read from Redis at scrape time; no sample before the first sweep or when Redis could not be read.",
    registers: [registry],
    async collect() {
      await attempt(this, "Redis (last reconciler sweep)", async () => {
        const at = await readLastSweepMs(queues);
        if (at !== null) this.set(at / 1_000);
      });
    },
  });
}
