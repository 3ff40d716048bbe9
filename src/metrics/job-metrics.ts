// Job durations, observed in the worker process that ran the job. BullMQ's own per-minute
// metrics (completed/failed counts, shown by Bull Board) need the workers to be created
// with WORKER_METRICS_OPTIONS.
import { MetricsTime, type Job, type Worker } from "bullmq";
import { Histogram, type Registry } from "prom-client";
import { METRIC_PREFIX } from "./registry.ts";

/** Spread into every `new Worker(…, { …WORKER_METRICS_OPTIONS })`: a week of per-minute points. */
export const WORKER_METRICS_OPTIONS = { metrics: { maxDataPoints: MetricsTime.ONE_WEEK } } as const;

/**
 * How one run of a job ended: the job is done (`completed`), it runs again later (`retrying`:
 * a delivery attempt the receiver did not take, or a run that threw with attempts left), or it
 * was given up (`failed`).
 */
export type JobOutcome = "completed" | "retrying" | "failed";

/** What a run's duration is read from: the queue, and when BullMQ started this run. */
export type JobRun = Pick<Job, "queueName" | "processedOn" | "finishedOn">;

export type JobDurations = {
  observe: (queue: string, seconds: number, outcome: JobOutcome) => void;
  /** Observes a run that ends now (or at its finishedOn stamp), from BullMQ's processedOn stamp. */
  observeRun: (job: JobRun | undefined, outcome: JobOutcome) => void;
};

export type JobMetrics = JobDurations & {
  /** Observes every run that the worker reports as completed or failed. */
  watch: (worker: Worker) => void;
};

const BUCKETS_SECONDS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

// One histogram, two observers: the worker's events (completed, failed) and the delivery
// processor (createDeliveryMetrics is given these metrics), which alone knows of a run that
// ends with the job parked in the delayed set for its next attempt (moveToDelayed +
// DelayedError): BullMQ emits no event for such a run, and without it every attempt that will
// be retried was missing.
export function createJobMetrics(registry: Registry): JobMetrics {
  const histogram = new Histogram({
    name: `${METRIC_PREFIX}job_duration_seconds`,
    help:
      "Time a worker spent on one run of a job, by queue and outcome: completed; retrying (the job runs again later: " +
      "a delivery attempt that failed and waits for its next try, or a run that threw with attempts left); failed (given up).",
    labelNames: ["queue", "outcome"],
    buckets: BUCKETS_SECONDS,
    registers: [registry],
  });
  const observe = (queue: string, seconds: number, outcome: JobOutcome) => histogram.observe({ queue, outcome }, Math.max(0, seconds));
  const observeRun: JobDurations["observeRun"] = (job, outcome) => {
    if (!job?.processedOn) return;
    observe(job.queueName, ((job.finishedOn ?? Date.now()) - job.processedOn) / 1000, outcome);
  };
  return {
    observe,
    observeRun,
    watch: (worker) => {
      worker.on("completed", (job) => observeRun(job, "completed"));
      // BullMQ stamps finishedOn only on a job it gives up; one it retries ended just now.
      worker.on("failed", (job) => observeRun(job, job?.finishedOn === undefined ? "retrying" : "failed"));
    },
  };
}
