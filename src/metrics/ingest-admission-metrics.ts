// The API's ingest admission (http/ingest-admission.ts), read when Prometheus scrapes: how many
// ingest requests store and wait in this process now, and how many were refused at capacity.
// Summed over the API processes (each has its own admission), unlike the store gauges.
import { Counter, Gauge, type Registry } from "prom-client";
import { INGEST_WAIT_MS, REFUSALS, type IngestAdmission } from "../http/ingest-admission.ts";
import { METRIC_PREFIX } from "./registry.ts";

export function registerIngestAdmissionMetrics(registry: Registry, admission: Pick<IngestAdmission, "storing" | "waiting" | "refused" | "limits">): void {
  new Gauge({
    name: `${METRIC_PREFIX}ingest_requests`,
    help: "Ingest requests in this API process by state: storing (at most INGEST_CONCURRENCY) or waiting for a turn (at most twice that, each for at most 2 s).",
    labelNames: ["state"],
    registers: [registry],
    collect() {
      this.set({ state: "storing" }, admission.storing());
      this.set({ state: "waiting" }, admission.waiting());
    },
  });

  new Gauge({
    name: `${METRIC_PREFIX}ingest_concurrency`,
    help: "The most ingest requests this API process stores at once (INGEST_CONCURRENCY, or its default).",
    registers: [registry],
    collect() {
      this.set(admission.limits.concurrency);
    },
  });

  // Counted by the admission itself (plain numbers, kept by the process), reported here.
  new Counter({
    name: `${METRIC_PREFIX}ingest_refused_total`,
    // From the constant, so the text cannot drift from the wait (it said 2 s once the wait was 5).
    help: `Ingest requests refused at capacity (503 unavailable, nothing stored) by this API process, by reason: queue_full (the line of waiting requests was full) or wait_exceeded (no turn within ${INGEST_WAIT_MS / 1000} s).`,
    labelNames: ["reason"],
    registers: [registry],
    collect() {
      const refused = admission.refused();
      this.reset();
      for (const reason of REFUSALS) this.inc({ reason }, refused[reason]);
    },
  });
}
