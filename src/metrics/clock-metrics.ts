// This process's clock against PostgreSQL's, as its last measurement found it (clock-watch.ts):
// each process's own, unlike the scrape-time gauges read from the stores, so a rule takes it per
// process (by its instance), never max or sum across them. Read at scrape time from the watch,
// without a query; no sample before the first measurement has succeeded.
import { Gauge, type Registry } from "prom-client";
import type { ClockSkewWatch } from "../clock-watch.ts";
import { toSeconds } from "../clock-skew.ts";
import { METRIC_PREFIX } from "./registry.ts";

export function registerClockOffsetGauge(registry: Registry, clock: Pick<ClockSkewWatch, "reading">): void {
  new Gauge({
    name: `${METRIC_PREFIX}clock_offset_seconds`,
    help:
      "How far this process's clock is from PostgreSQL's, in seconds (positive: ahead; measured at start and every 30 s, through the process's own pool). " +
      "More than 5 s either way, from Redis's clock too, and a worker takes no jobs, and the process's /readyz answers 503; no sample before the first measurement.",
    registers: [registry],
    collect() {
      const reading = clock.reading();
      this.reset();
      this.remove({});
      if (reading) this.set(toSeconds(reading.aheadMs));
    },
  });
}
