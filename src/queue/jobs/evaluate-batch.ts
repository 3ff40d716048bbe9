// The `transactions` queue: one job per ingest batch (never one per transaction).
import type { Job } from "bullmq";
import { evaluateBatch, type BatchOutcome, type PipelineDeps } from "../../pipeline/evaluate-batch.ts";
import type { EvaluateBatchJob } from "../names.ts";

/** `stopping` is aborted when the worker starts closing: a job looping through a backlog ends between runs. */
export function makeEvaluateBatchProcessor(
  deps: PipelineDeps,
  stopping: AbortSignal,
): (job: Job<EvaluateBatchJob>) => Promise<BatchOutcome> {
  return (job) => evaluateBatch(deps, job.data.batchId, () => stopping.aborted);
}
