// What the evaluation workers do beyond job durations: how large their groups grow (a
// backlog shows as groups near EVALUATION_GROUP_TRANSACTIONS), and whether each batch found
// the active alerts in memory or had to query them (a stream of alert changes shows as
// queries, and as loads).
import type { Worker } from "bullmq";
import { Counter, Histogram, type Registry } from "prom-client";
import type { AlertRules } from "../pipeline/alert-rules.ts";
import type { BatchOutcome } from "../pipeline/evaluate-batch.ts";
import { QUEUES } from "../queue/names.ts";
import { METRIC_PREFIX } from "./registry.ts";

export type EvaluationMetrics = {
  /** Observes the groups that this worker's evaluation jobs complete. */
  watch: (worker: Worker) => void;
};

const GROUP_BUCKETS = [1, 10, 100, 1_000, 2_500, 5_000, 10_000, 20_000, 50_000];

export function createEvaluationMetrics(registry: Registry, alertRules: Pick<AlertRules, "stats">): EvaluationMetrics {
  const groups = new Histogram({
    name: `${METRIC_PREFIX}evaluation_group_transactions`,
    help: "Transactions per evaluation (one or more ingest batches evaluated together).",
    buckets: GROUP_BUCKETS,
    registers: [registry],
  });
  new Counter({
    name: `${METRIC_PREFIX}alert_rules_lookups_total`,
    help: "Evaluations that took the active alerts from this worker's memory (memory) or from PostgreSQL because they had changed since the last load (query).",
    labelNames: ["source"],
    registers: [registry],
    collect() {
      const { fromMemory, queried } = alertRules.stats();
      this.reset();
      this.inc({ source: "memory" }, fromMemory);
      this.inc({ source: "query" }, queried);
    },
  });
  new Counter({
    name: `${METRIC_PREFIX}alert_rules_loads_total`,
    help: "Full loads of the active alerts into this worker's memory.",
    registers: [registry],
    collect() {
      this.reset();
      this.inc(alertRules.stats().loads);
    },
  });
  return {
    watch: (worker) => {
      if (worker.name !== QUEUES.transactions) return;
      worker.on("completed", (_job, outcome: BatchOutcome) => {
        if (outcome?.status === "evaluated") for (const size of outcome.groups) groups.observe(size);
      });
    },
  };
}
