// Job durations, observed in the worker process that ran the job. BullMQ's own per-minute
// metrics (completed/failed counts, shown by Bull Board) need the workers to be created
// with WORKER_METRICS_OPTIONS.
import { MetricsTime, type Job, type Worker } from "bullmq";
import { Histogram, type Registry } from "prom-client";
import { METRIC_PREFIX } from "./registry.ts";

/** Spread into every `new Worker(…, { …WORKER_METRICS_OPTIONS })`: a week of per-minute points. */
export const WORKER_METRICS_OPTIONS = { metrics: { maxDataPoints: MetricsTime.ONE_WEEK } } as const;

export type JobOutcome = "completed" | "failed";

export type JobMetrics = {
  observe: (queue: string, seconds: number, outcome: JobOutcome) => void;
  /** Observes every job the worker finishes, from BullMQ's processedOn/finishedOn stamps. */
  watch: (worker: Worker) => void;
};

const BUCKETS_SECONDS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

export function createJobMetrics(registry: Registry): JobMetrics {
  const histogram = new Histogram({
    name: `${METRIC_PREFIX}job_duration_seconds`,
    help: "Time a worker spent on a job attempt, by queue and outcome (completed, or failed: retried or given up).",
    labelNames: ["queue", "outcome"],
    buckets: BUCKETS_SECONDS,
    registers: [registry],
  });
  const observe = (queue: string, seconds: number, outcome: JobOutcome) =>
    histogram.observe({ queue, outcome }, Math.max(0, seconds));
  const record = (queue: string, job: Job | undefined, outcome: JobOutcome) => {
    if (!job?.processedOn) return;
    // A failed attempt that will be retried has no finishedOn: it ended just now.
    observe(queue, ((job.finishedOn ?? Date.now()) - job.processedOn) / 1000, outcome);
  };
  return {
    observe,
    watch: (worker) => {
      worker.on("completed", (job) => record(worker.name, job, "completed"));
      worker.on("failed", (job) => record(worker.name, job, "failed"));
    },
  };
}
